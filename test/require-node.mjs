// `npm test` runs on Node 22.12 or later: the clients it tests with (msw 3, openai 7, ai 7)
// need it. Hearth itself runs on Node 20.19+, which test/package tests from an installed app.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`hearth: npm test needs Node 22.12 or later (this is Node ${process.versions.node}); see README "Set up".`);
  process.exit(1);
}
