// Every part kind shown for a person: text (markdown shown as text), JSON pretty-printed,
// files downloadable, images shown. Large content is shown in part, never all at once.

import { h, size } from './dom.js';

const SHOWN_TEXT = 100_000;

/** Images shown inline: raster formats only (an SVG is a document that can hold script). */
const RASTER = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp'];

function b64ToBytes(b64) {
  const s = atob(String(b64).replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

function download(name, blob, label) {
  const url = URL.createObjectURL(blob);
  return h('a', { href: url, download: name || 'download', class: 'download' }, label || `Download ${name || 'file'} (${size(blob.size)})`);
}

/** One part. */
export function renderPart(p) {
  if (p.text !== undefined) {
    const text = String(p.text);
    const kind = (p.mediaType || '').includes('markdown') ? 'markdown' : 'text';
    if (text.length > SHOWN_TEXT) {
      return h('div', { class: `part part-${kind}` },
        h('pre', {}, text.slice(0, SHOWN_TEXT)),
        h('p', { class: 'hint' }, `Showing the first ${size(SHOWN_TEXT)} of ${size(text.length)}. `, download('text.txt', new Blob([text], { type: 'text/plain' }), 'Download all')));
    }
    return h('pre', { class: `part part-${kind}` }, text);
  }
  if (p.data !== undefined) {
    let json = JSON.stringify(p.data, null, 2);
    if (json.length > SHOWN_TEXT) json = `${json.slice(0, SHOWN_TEXT)}\n… (${size(json.length)})`;
    return h('pre', { class: 'part part-data', 'aria-label': 'JSON data' }, json);
  }
  if (p.raw !== undefined) {
    let bytes;
    try { bytes = b64ToBytes(p.raw); } catch { return h('p', { class: 'error' }, 'A file part whose bytes are not base64.'); }
    const type = p.mediaType || 'application/octet-stream';
    const name = p.filename || 'file';
    // Downloads carry no type of the agent's choosing: a blob of type text/html or an SVG
    // opened in a tab would run on this console's origin.
    const saved = new Blob([bytes], { type: 'application/octet-stream' });
    if (RASTER.includes(type)) {
      const shown = new Blob([bytes], { type });
      return h('figure', { class: 'part part-image' }, h('img', { src: URL.createObjectURL(shown), alt: name }), h('figcaption', {}, download(name, saved)));
    }
    return h('div', { class: 'part part-file' }, download(name, saved), h('span', { class: 'hint' }, ` ${type}`));
  }
  if (p.url !== undefined) {
    const type = p.mediaType || '';
    const safe = /^https?:/i.test(p.url);
    const link = safe ? h('a', { href: p.url, target: '_blank', rel: 'noopener noreferrer' }, p.filename || p.url) : h('code', {}, p.url);
    if (safe && RASTER.includes(type)) return h('figure', { class: 'part part-image' }, h('img', { src: p.url, alt: p.filename || 'image' }), h('figcaption', {}, link));
    return h('div', { class: 'part part-url' }, link, type ? h('span', { class: 'hint' }, ` ${type}`) : null);
  }
  return h('pre', { class: 'part' }, JSON.stringify(p, null, 2));
}

/** An artifact: its name, its parts. */
export function renderArtifact(a, { open = false } = {}) {
  return h('section', { class: 'artifact', dataset: { artifactId: a.artifactId, artifactName: a.name || '' } },
    h('h4', {}, a.name || a.artifactId, open ? h('span', { class: 'hint' }, ' (receiving…)') : null),
    a.description ? h('p', { class: 'hint' }, a.description) : null,
    (a.parts || []).map(renderPart));
}

/** A message's parts. */
export function renderMessage(m) {
  return h('div', { class: `message role-${m.role === 'ROLE_USER' ? 'user' : 'agent'}` }, (m.parts || []).map(renderPart));
}

/** The text of a message, for one line. */
export function textOf(m) {
  return ((m && m.parts) || []).filter((p) => p.text !== undefined).map((p) => p.text).join('');
}

/**
 * Artifacts assembled from artifact updates, as a client must: `append` extends the parts
 * of the artifact with the same id, `lastChunk` closes it.
 */
export class ArtifactAssembler {
  constructor(initial = []) {
    this.byId = new Map();
    for (const a of initial) this.byId.set(a.artifactId, { artifact: structuredClone(a), open: false });
  }

  apply(update) {
    const a = update.artifact;
    const known = this.byId.get(a.artifactId);
    if (update.append && known) {
      known.artifact.parts = [...(known.artifact.parts || []), ...(a.parts || [])];
      // Text chunks read as one text.
      const parts = known.artifact.parts;
      for (let i = parts.length - 1; i > 0; i--) {
        if (parts[i].text !== undefined && parts[i - 1].text !== undefined && !parts[i].metadata && !parts[i - 1].metadata) {
          parts[i - 1] = { ...parts[i - 1], text: parts[i - 1].text + parts[i].text };
          parts.splice(i, 1);
        }
      }
      known.open = !update.lastChunk;
    } else {
      this.byId.set(a.artifactId, { artifact: structuredClone(a), open: update.lastChunk === false });
    }
  }

  list() {
    return [...this.byId.values()];
  }
}
