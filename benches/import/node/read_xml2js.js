#!/usr/bin/env node
// Competitor reader: xml2js, the way dorny/test-reporter's java-junit parser reads a report:
// the whole file as one string, parseStringPromise(content) with default options, then a walk
// over testsuites.testsuite[].testcase[] building name/result/time/error per case.
// Usage: node read_xml2js.js FILE   Prints: cases=N failures=F skipped=S (stderr: phases: ...)
'use strict'
const fs = require('fs')
const {parseStringPromise} = require('xml2js')

async function main(file) {
  const t0 = process.hrtime.bigint()
  const content = fs.readFileSync(file, 'utf8')
  const doc = await parseStringPromise(content)
  const t1 = process.hrtime.bigint()
  const root = doc.testsuites !== undefined ? doc.testsuites : {testsuite: [doc.testsuite]}
  const cases = []
  for (const ts of root.testsuite || []) {
    const suiteName = ts.$.name.trim()
    for (const tc of ts.testcase || []) {
      const className = tc.$.classname === suiteName ? '' : tc.$.classname
      const result = tc.failure || tc.error ? 'failed' : tc.skipped ? 'skipped' : 'success'
      const failures = tc.failure || tc.error
      let error
      if (failures) {
        const f = failures[0]
        const details = typeof f === 'object' ? f._ : f
        // dorny scans the trace for the throwing frame: /^at (.*)\((.*):(\d+)\)$/ per line
        let src
        if (details != null) {
          for (const line of details.split(/\r?\n/)) {
            const m = line.match(/^at (.*)\((.*):(\d+)\)$/)
            if (m) { src = {path: m[2], line: parseInt(m[3])}; break }
          }
        }
        error = {details, message: typeof f === 'object' ? f.$.message : undefined, src}
      }
      cases.push({group: className, name: tc.$.name.trim(), result, time: parseFloat(tc.$.time) * 1000, error})
    }
  }
  const t2 = process.hrtime.bigint()
  console.error(`phases: parse=${(Number(t1 - t0) / 1e9).toFixed(2)}s walk=${(Number(t2 - t1) / 1e9).toFixed(2)}s`)
  const failures = cases.filter(c => c.result === 'failed').length
  const skipped = cases.filter(c => c.result === 'skipped').length
  console.log(`cases=${cases.length} failures=${failures} skipped=${skipped}`)
}

if (process.argv.length !== 3) { console.error('usage: read_xml2js.js FILE'); process.exit(2) }
main(process.argv[2]).catch(e => { console.error(e); process.exit(1) })
