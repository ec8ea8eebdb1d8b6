import { writeFixtures, FIXTURES_DIR } from '../../models/index.js';

/** The fixture models every test uses, written once if missing. */
export async function fixtures(): Promise<string> {
  await writeFixtures({ ifMissing: true });
  return FIXTURES_DIR;
}
