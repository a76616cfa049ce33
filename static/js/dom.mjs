// Building the page without HTML strings: every value, and above all every value taken from a
// wheel (names, summaries, METADATA), enters the document as a text node, never as markup.

const SVG = 'http://www.w3.org/2000/svg';

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function apply(node, props) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'innerHTML' || key === 'outerHTML') throw new Error('markup is never set from values');
    if (key === 'class') node.setAttribute('class', value);
    else if (key === 'on') for (const [type, handler] of Object.entries(value)) node.addEventListener(type, handler);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key in node && typeof node[key] !== 'function' && !(node instanceof SVGElement)) node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  return node;
}

// el('a', {href: '#/', class: 'x', on: {click}}, 'text', child, [more])
export function el(tag, props, ...children) {
  return append(apply(document.createElement(tag), props), children);
}

export function svg(tag, props, ...children) {
  return append(apply(document.createElementNS(SVG, tag), props), children);
}

// node.append() would write null as the text "null": this skips null, undefined and false.
export function add(node, ...children) {
  return append(node, children);
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = Number(bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

// "2026-11-22 07:55 UTC" from PEP 700's ISO form; the full time is in the title.
export function formatTime(iso) {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function timeElement(iso) {
  return iso ? el('time', {dateTime: iso, title: iso}, formatTime(iso)) : '—';
}

// "a before b" with runs of digits compared as numbers: cp39 < cp312, 2.9 < 2.10.
export function naturalCompare(a, b) {
  return String(a).localeCompare(String(b), 'en', {numeric: true});
}

export function copyButton(getText, label = 'Copy') {
  const button = el('button', {type: 'button', class: 'copy'}, label);
  button.addEventListener('click', async () => {
    const text = getText();
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      // No clipboard (plain http on another host): select the text for a manual copy instead.
      const range = document.createRange();
      range.selectNodeContents(button.previousElementSibling ?? button);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => { button.textContent = label; }, 2000);
  });
  return button;
}

// A link only for http(s) URLs and paths of this site; anything else (javascript:, data:) as text.
export function safeLink(url, props = {}) {
  if (typeof url === 'string' && /^(https?:\/\/|\/(?!\/))/i.test(url)) return el('a', {...props, href: url}, url);
  return el('span', null, String(url));
}
