/** A minimal element tree, built for one `<host>` at a time and then converted to typed data. */
export interface XmlNode {
  name: string;
  attrs: Readonly<Record<string, string>>;
  children: XmlNode[];
  text: string;
}

export function child(node: XmlNode, name: string): XmlNode | undefined {
  return node.children.find((c) => c.name === name);
}

export function childrenNamed(node: XmlNode, name: string): XmlNode[] {
  return node.children.filter((c) => c.name === name);
}

/** An attribute, or undefined when absent or empty (nmap writes optional attributes only when it knows them). */
export function attr(node: XmlNode, name: string): string | undefined {
  const v = node.attrs[name];
  return v === undefined || v === '' ? undefined : v;
}

/** A numeric attribute, or undefined when absent or not a number. */
export function numAttr(node: XmlNode, name: string): number | undefined {
  const v = attr(node, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}
