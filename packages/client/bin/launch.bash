# Sourced by bin/svc and bin/svcd (bash, after `set -euo pipefail`): the part of starting a
# TypeScript program under Node that both share.
#   launch_node NAME PACKAGE_DIR  sets node_bin: SVC_NODE, else the project's pinned Node (the
#                                 repository's or the package's node_modules/.bin/node), else node
#                                 on PATH; exits 2 naming NAME when none runs TypeScript (22.18+).
#   launch_compile_cache          exports NODE_COMPILE_CACHE in the user's own cache directory.

launch_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"

launch_node() {
  local name="$1" package="$2" candidate version major minor
  node_bin="${SVC_NODE:-}"
  if [[ -z "$node_bin" ]]; then
    for candidate in "$launch_root/node_modules/.bin/node" "$package/node_modules/.bin/node" "$(command -v node || true)"; do
      if [[ -n "$candidate" && -x "$candidate" ]]; then node_bin="$candidate"; break; fi
    done
  fi
  if [[ -z "$node_bin" ]]; then
    echo "$name: Node.js 22.18 or later is required and none was found (install it, or set SVC_NODE)" >&2
    exit 2
  fi
  version="$("$node_bin" -p 'process.versions.node' 2>/dev/null || echo 0)"
  IFS=. read -r major minor _ <<<"$version"
  if (( major < 22 || (major == 22 && minor < 18) )); then
    echo "$name: Node.js 22.18 or later is required to run TypeScript directly; $node_bin is $version (set SVC_NODE to a newer one)" >&2
    exit 2
  fi
}

# Node's compile cache keeps the compiled TypeScript modules between runs, so a start costs about
# a third less CPU (bench/README.md, bench:scan). It lives in the user's own cache directory, never in
# a shared temp dir whose entries another user could plant. An explicit NODE_COMPILE_CACHE or
# NODE_DISABLE_COMPILE_CACHE wins; an unset HOME or one that does not exist gets no cache
# (nothing is created anywhere).
launch_compile_cache() {
  if [[ -z "${NODE_COMPILE_CACHE:-}" && -z "${NODE_DISABLE_COMPILE_CACHE:-}" && -n "${HOME:-}" && -d "$HOME" ]]; then
    export NODE_COMPILE_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/svc/node-compile-cache"
  fi
}
