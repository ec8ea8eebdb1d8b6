// `tsx models/cli.ts [--preset bench] [--if-missing] [--out DIR]`: writes the fixture models.
import { FIXTURES_DIR, writeFixtures, type Preset } from './index.js';

const args = process.argv.slice(2);
let preset: Preset = 'default';
let outDir = FIXTURES_DIR;
let ifMissing = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--preset') preset = args[++i] as Preset;
  else if (a.startsWith('--preset=')) preset = a.slice(9) as Preset;
  else if (a === '--if-missing') ifMissing = true;
  else if (a === '--out') outDir = args[++i]!;
  else {
    console.error(`unknown argument: ${a}\nusage: models [--preset default|bench|exports] [--if-missing] [--out DIR]`);
    process.exit(2);
  }
}
if (preset !== 'default' && preset !== 'bench' && preset !== 'exports') {
  console.error(`unknown preset: ${preset}`);
  process.exit(2);
}
const t0 = Date.now();
const written = await writeFixtures({ outDir, preset, ifMissing });
for (const name of written) console.log(`wrote ${outDir}/${name}`);
if (written.length === 0) console.log(`fixtures already present in ${outDir}`);
else console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
