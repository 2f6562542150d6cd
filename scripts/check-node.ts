// Guard for `npm test`/`npm start`: the project's scripts must run on the pinned Node 24
// (the `node` dev dependency puts its binary first on the scripts' PATH).
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `Node ${process.versions.node} found; the project's scripts need Node 24 (run them through npm after npm ci).`,
  );
  process.exit(1);
}
