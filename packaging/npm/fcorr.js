#!/usr/bin/env node
// The `fcorr` command of the npm package: runs the fcorr binary that npm installed as the
// optional dependency for this platform (<scope>/<platform>-<arch>, chosen by its `os` and
// `cpu` fields), with the same arguments, stdio and exit code. The binary is the release's,
// byte for byte; this file only finds it. Signals sent to this process are passed on, and a
// binary killed by a signal ends this process with the same signal.
"use strict";

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");
const pkg = require(path.join(__dirname, "..", "package.json"));

const here = `${process.platform}-${process.arch}`;
const packages = Object.keys(pkg.optionalDependencies || {});
const platforms = packages.map((name) => name.slice(name.lastIndexOf("/") + 1));

function fail(message) {
  process.stderr.write(`fcorr: ${message}\n`);
  // fcorr's own code for "could not run for a reason outside the run" (infrastructure).
  process.exit(3);
}

const wanted = packages.find((name) => name.endsWith(`/${here}`));
if (wanted === undefined) {
  fail(
    `fcorr ${pkg.version} has no binary for this platform (${here}). ` +
      `Binaries exist for: ${platforms.join(", ")}. ` +
      "Elsewhere, build it from source with `cargo install fcorr` " +
      "(Linux and macOS; Windows has no process backend yet, see the README's Platforms).",
  );
}

let bin;
try {
  bin = require.resolve(`${wanted}/bin/fcorr`);
} catch {
  fail(
    `the package ${wanted}, which holds the fcorr binary for ${here}, is not installed. ` +
      "npm leaves optional dependencies out with --omit=optional (or --no-optional), and a " +
      "node_modules installed on another platform has another platform's binary. " +
      `Reinstall here without those: npm install fcorr@${pkg.version}`,
  );
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
for (const signal of forwarded) {
  // A terminal's Ctrl-C reaches both processes; fcorr treats a repeated interrupt the same.
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => fail(`could not start ${bin}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // Signals Node ignores (SIGPIPE) do not end it: exit as a shell reports a signal death.
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 200);
    return;
  }
  process.exit(code === null ? 3 : code);
});
