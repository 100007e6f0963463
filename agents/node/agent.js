#!/usr/bin/env node
// An arithmetic agent in Node.js, run by ablation's CommandAgent:
//
//   ablation run tasks/arithmetic.py --baseline agents/arithmetic.py:baseline \
//       --candidate "cmd:node agents/node/agent.js"
//
// Protocol: one JSON document on stdin (the task input, {"expression": "2 + 3 * 4"}), one JSON
// document on stdout ({"output": 14}). Logs go to stderr; a non-zero exit code is a failed call.
// The expression is parsed here (shunting-yard over + - * / with the usual precedence and
// left associativity; tokens are separated by spaces and may be negative numbers), never
// evaluated as code.
"use strict";

const PRECEDENCE = { "+": 1, "-": 1, "*": 2, "/": 2 };

function apply(op, left, right) {
  switch (op) {
    case "+": return left + right;
    case "-": return left - right;
    case "*": return left * right;
    case "/":
      if (right === 0) throw new Error("division by zero");
      return left / right;
    default: throw new Error(`unknown operator ${op}`);
  }
}

function evaluate(expression) {
  if (typeof expression !== "string" || !expression.trim()) {
    throw new Error("the input needs a non-empty string 'expression'");
  }
  const values = [];
  const ops = [];
  const reduce = () => {
    const op = ops.pop();
    const right = values.pop();
    const left = values.pop();
    if (left === undefined || right === undefined) throw new Error("malformed expression");
    values.push(apply(op, left, right));
  };
  for (const token of expression.trim().split(/\s+/)) {
    if (token in PRECEDENCE) {
      while (ops.length && PRECEDENCE[ops[ops.length - 1]] >= PRECEDENCE[token]) reduce();
      ops.push(token);
    } else {
      const value = Number(token);
      if (!Number.isFinite(value)) throw new Error(`not a number: ${JSON.stringify(token)}`);
      values.push(value);
    }
  }
  while (ops.length) reduce();
  if (values.length !== 1) throw new Error("malformed expression");
  return values[0];
}

let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { raw += chunk; });
process.stdin.on("end", () => {
  try {
    const input = JSON.parse(raw);
    const output = evaluate(input && input.expression);
    process.stdout.write(JSON.stringify({ output }) + "\n");
  } catch (err) {
    process.stderr.write(`agent.js: ${err.message}\n`);
    process.exitCode = 1;
  }
});
