/**
 * The console's only way to build DOM: elements with text set through `textContent`, never
 * through HTML, so session content with markup in it renders as text.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; attrs?: Record<string, string> } = {},
  ...children: Node[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (props.class) node.className = props.class
  if (props.text !== undefined) node.textContent = props.text
  for (const [k, v] of Object.entries(props.attrs ?? {})) node.setAttribute(k, v)
  node.append(...children)
  return node
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id)
  if (!node) throw new Error(`the page has no #${id}`)
  return node as T
}
