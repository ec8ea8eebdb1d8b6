// A small bar chart as SVG, so `npm run bench` needs no plotting dependency.

export interface Bar {
  label: string;
  value: number;
  note?: string;
  color?: string;
}

export function barChart(title: string, unit: string, bars: Bar[], width = 640): string {
  const rowH = 34;
  const left = 190;
  const top = 44;
  const height = top + bars.length * rowH + 28;
  const max = Math.max(...bars.map((b) => b.value)) || 1;
  // Room on the right for the value and its note.
  const scale = (width - left - 190) / max;
  const esc = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  const rows = bars
    .map((b, i) => {
      const y = top + i * rowH;
      const w = Math.max(1, b.value * scale);
      return [
        `<text x="${left - 8}" y="${y + 21}" text-anchor="end">${esc(b.label)}</text>`,
        `<rect x="${left}" y="${y + 6}" width="${w.toFixed(1)}" height="${rowH - 12}" fill="${b.color ?? '#d9622b'}" rx="3"/>`,
        `<text x="${left + w + 6}" y="${y + 21}">${b.value.toFixed(b.value < 10 ? 2 : 0)} ${esc(unit)}${b.note ? ` · ${esc(b.note)}` : ''}</text>`,
      ].join('');
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="13">
<rect width="100%" height="100%" fill="#fff"/>
<text x="12" y="26" font-size="16" font-weight="bold">${esc(title)}</text>
${rows}
</svg>
`;
}

/** Several charts stacked into one image. */
export function stack(svgs: string[]): string {
  let y = 0;
  let width = 0;
  const parts = svgs.map((svg) => {
    const w = Number(/width="(\d+)"/.exec(svg)![1]);
    const h = Number(/height="(\d+)"/.exec(svg)![1]);
    width = Math.max(width, w);
    const part = `<g transform="translate(0 ${y})">${svg.replace(/^<svg[^>]*>/, '').replace(/<\/svg>\s*$/, '')}</g>`;
    y += h;
    return part;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="sans-serif" font-size="13">\n${parts.join('\n')}\n</svg>\n`;
}
