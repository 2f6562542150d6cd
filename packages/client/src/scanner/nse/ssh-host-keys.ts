/**
 * The scanner's own NSE script for SSH host keys, run beside nmap's scripts (nse/index.ts writes
 * it out for each run). nmap 7.93's ssh-hostkey loses a key about once in 500 tries (nmap's
 * `ssh2.transport.pack_mpint` packs the key exchange value as a negative number when its top bit is
 * set and its length is not a multiple of 8, and OpenSSH hangs up with "bignum is negative"), and
 * it asks for RSA keys only as `ssh-rsa`, which OpenSSH 8.8 and later no longer offer, so it never
 * sees their RSA keys. This script asks for each key the server offers by an algorithm it offers,
 * and tries again (up to three tries) when a try fails. Output, per port:
 *
 *   <table key="keys"><table><elem key="type">ssh-rsa</elem><elem key="bits">1024</elem>
 *     <elem key="fingerprint">SHA256:…</elem><elem key="algorithm">rsa-sha2-512</elem>
 *     <elem key="tries">1</elem></table>…</table>
 *   <table key="unmeasured"><elem>ssh-dss: no key after 3 tries</elem></table>   (only when any)
 *
 * Held as a string so the one-file bundles of `svc` and `svcd` carry it (scripts/release/client-archive.ts).
 */

export const SSH_HOST_KEYS_ID = 'svc-ssh-host-keys';

export const SSH_HOST_KEYS_SOURCE = String.raw`local base64 = require "base64"
local nmap = require "nmap"
local openssl = require "openssl"
local shortport = require "shortport"
local ssh2 = require "ssh2"
local stdnse = require "stdnse"
local stringaux = require "stringaux"
local table = require "table"

description = [[
Measures the host keys an SSH server offers: the type and size of each, fetched once per key and
fetched again, up to three tries, when a try fails. nmap 7.93's ssh-hostkey reports a key only
after a single try, which fails about once in 500 (its key exchange value is sometimes packed as a
negative number), and asks for RSA keys only as ssh-rsa, which OpenSSH 8.8 and later no longer offer.
]]
author = "svc"
license = "Same as svc"
categories = {"safe", "discovery"}

portrule = shortport.ssh

local TRIES = 3

-- One entry per key; an RSA key is asked for by the first of its algorithms the server offers.
local KEYS = {
  { "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa" },
  { "ssh-dss" },
  { "ecdsa-sha2-nistp256" },
  { "ecdsa-sha2-nistp384" },
  { "ecdsa-sha2-nistp521" },
  { "ssh-ed25519" },
}

-- The key exchanges ssh2.fetch_host_key can run.
local DH_KEX = { "diffie-hellman-group1-", "diffie-hellman-group14-", "diffie-hellman-group16-",
  "diffie-hellman-group-exchange-" }

local ECDSA_BITS = { ["ecdsa-sha2-nistp256"] = 256, ["ecdsa-sha2-nistp384"] = 384, ["ecdsa-sha2-nistp521"] = 521 }

-- The server's KEXINIT: its key exchange and host key algorithm lists, or nil.
local function server_offer(host, port)
  local socket = nmap.new_socket()
  if not socket:connect(host, port) then return nil end
  local ok = socket:send("SSH-2.0-svc_SSH_Host_Keys\r\n")
  if ok then ok = socket:receive_buf("\r?\n", false) end
  if ok then ok = socket:send(ssh2.transport.build(ssh2.transport.kex_init())) end
  local packet
  if ok then ok, packet = ssh2.transport.receive_packet(socket) end
  socket:close()
  if not ok then return nil end
  local parsed = ssh2.transport.parse_kex_init(ssh2.transport.payload(packet))
  if parsed.kex_algorithms == nil then return nil end
  return {
    kex = stringaux.strsplit(",", parsed.kex_algorithms),
    host_keys = stringaux.strsplit(",", parsed.server_host_key_algorithms),
  }
end

local function has(list, wanted)
  for _, v in ipairs(list) do
    if v == wanted then return true end
  end
  return false
end

local function has_prefix(list, prefixes)
  for _, v in ipairs(list) do
    for _, p in ipairs(prefixes) do
      if v:sub(1, #p) == p then return true end
    end
  end
  return false
end

-- The key's type and size, read from its public key blob (RFC 4253 6.6).
local function measure(blob)
  local key_type, pos = string.unpack(">s4", blob)
  local bits
  if key_type == "ssh-rsa" then
    local _, n = string.unpack(">s4s4", blob, pos)
    bits = openssl.bignum_bin2bn(n):num_bits()
  elseif key_type == "ssh-dss" then
    local p = string.unpack(">s4", blob, pos)
    bits = openssl.bignum_bin2bn(p):num_bits()
  elseif ECDSA_BITS[key_type] then
    bits = ECDSA_BITS[key_type]
  elseif key_type == "ssh-ed25519" then
    bits = 256
  end
  return key_type, bits
end

local function fetch(host, port, algorithm)
  for try = 1, TRIES do
    local key = ssh2.fetch_host_key(host, port, algorithm)
    if key ~= nil then return key.fp_input, try end
    stdnse.debug1("no %s host key from try %d", algorithm, try)
  end
  return nil, TRIES
end

action = function(host, port)
  local offer
  for _ = 1, TRIES do
    offer = server_offer(host, port)
    if offer ~= nil then break end
  end
  if offer == nil then return nil end

  local keys, unmeasured = {}, {}
  local can_fetch = has_prefix(offer.kex, DH_KEX)
  for _, algorithms in ipairs(KEYS) do
    local algorithm
    for _, a in ipairs(algorithms) do
      if algorithm == nil and has(offer.host_keys, a) then algorithm = a end
    end
    if algorithm ~= nil then
      local blob, tries
      if can_fetch then blob, tries = fetch(host, port, algorithm) end
      if blob ~= nil then
        local key_type, bits = measure(blob)
        local fp = base64.enc(openssl.digest("sha256", blob)):gsub("=+$", "")
        local key = stdnse.output_table()
        key.type = key_type
        key.bits = bits
        key.fingerprint = "SHA256:" .. fp
        key.algorithm = algorithm
        key.tries = tries
        -- Normal output: one line per key, as ssh-keygen -l prints it.
        getmetatable(key).__tostring = function(k)
          return ("%s %s (%s)"):format(k.bits or "?", k.fingerprint, k.type)
        end
        table.insert(keys, key)
      else
        table.insert(unmeasured, can_fetch and (algorithm .. ": no key after " .. TRIES .. " tries")
          or (algorithm .. ": no Diffie-Hellman key exchange in common"))
      end
    end
  end

  local out = stdnse.output_table()
  out.keys = keys
  if #unmeasured > 0 then out.unmeasured = unmeasured end
  return out
end
`;
