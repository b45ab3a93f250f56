#!/usr/bin/env node
// Competitor reader: xml-js, the way mikepenz/action-junit-report reads a report:
// readFileSync(file, 'utf8'), JSON.parse(xml2json(data, {compact: true})), then a recursive walk
// over testsuite(s) building one annotation-like record per <testcase> (message, trace, file/line).
// Usage: node read_xml-js.js FILE   Prints: cases=N failures=F skipped=S (stderr: phases: ...)
'use strict'
const fs = require('fs')
const parser = require('xml-js')

const asArray = x => (x === undefined ? [] : Array.isArray(x) ? x : [x])

function walk(node, out) {
  const suites = node.testsuite ? asArray(node.testsuite) : node.testsuites ? asArray(node.testsuites.testsuite) : []
  for (const ts of suites) {
    if (!ts) break
    walk(ts, out)
    for (const tc of asArray(ts.testcase)) {
      const a = tc._attributes || {}
      const testFailure = tc.failure || tc.error
      const skip = tc.skipped || a.status === 'disabled' || a.status === 'ignored'
      const failure = asArray(tc.failure)[0]
      const stackTrace = String(
        (failure && failure._cdata) || (failure && failure._text) ||
        (tc.error && tc.error._cdata) || (tc.error && tc.error._text) || ''
      ).trim()
      const message = (
        (failure && failure._attributes && failure._attributes.message) ||
        (tc.error && tc.error._attributes && tc.error._attributes.message) ||
        stackTrace.split('\n').slice(0, 2).join('\n') || a.name
      ).trim()
      out.push({
        path: a.file || (a.classname || a.name).split('.').slice(-1)[0],
        line: parseInt(a.line) || 1,
        status: skip ? 'skipped' : !testFailure ? 'success' : 'failure',
        title: `${a.file}.${a.name}`,
        message,
        raw_details: stackTrace,
        time: a.time
      })
    }
  }
}

const file = process.argv[2]
if (process.argv.length !== 3) { console.error('usage: read_xml-js.js FILE'); process.exit(2) }
const t0 = process.hrtime.bigint()
const data = fs.readFileSync(file, 'utf8')
const report = JSON.parse(parser.xml2json(data, {compact: true}))
const t1 = process.hrtime.bigint()
const cases = []
walk(report, cases)
const t2 = process.hrtime.bigint()
console.error(`phases: parse=${(Number(t1 - t0) / 1e9).toFixed(2)}s walk=${(Number(t2 - t1) / 1e9).toFixed(2)}s`)
const failures = cases.filter(c => c.status === 'failure').length
const skipped = cases.filter(c => c.status === 'skipped').length
console.log(`cases=${cases.length} failures=${failures} skipped=${skipped}`)
