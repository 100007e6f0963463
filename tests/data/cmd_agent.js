// A command agent in Node.js for the tests: doubles input.x and reports a cost.
let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { raw += chunk; });
process.stdin.on("end", () => {
  const input = JSON.parse(raw);
  process.stdout.write(JSON.stringify({ output: input.x * 2, cost: 0.001 }) + "\n");
});
