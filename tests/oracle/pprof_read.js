// node pprof_read.js NPM_DIR PROFILE: decodes a pprof profile with the npm pprof-format
// decoder (Datadog's; gunzipped first when it starts with the gzip magic), checks the
// references a pprof consumer follows, and prints
//   info <key> <value>      the profile's shape (sample types, labels, counts, the sum of
//                           the second value column)
//   flat <count> <name>     the samples whose leaf is function <name> (first value column)
//   loc <id> <address>      every Location (hex, as go tool pprof -raw prints them)
//   column <type>/<unit> <sum>   each value column's total
// or "error <why>" lines and exit status 1.
'use strict';
const fs = require('fs'), zlib = require('zlib'), path = require('path');
const [npm, file] = process.argv.slice(2);
const { Profile } = require(path.join(npm, 'node_modules', 'pprof-format'));
let buf = fs.readFileSync(file);
const gz = buf.length > 2 && buf[0] === 0x1f && buf[1] === 0x8b;
if (gz) buf = zlib.gunzipSync(buf);
const p = Profile.decode(buf);
const S = p.stringTable.strings, errors = [];
const num = (v) => Number(v);
const str = (i) => { i = num(i); if (i < 0 || i >= S.length) { errors.push('string index ' + i + ' out of range'); return ''; } return S[i]; };
if (S[0] !== '') errors.push('string_table[0] is not ""');
if (new Set(S).size !== S.length) errors.push('the string table has duplicates');
const byId = (list, what) => {
  const m = new Map();
  for (const x of list) {
    const id = num(x.id);
    if (!id || m.has(id)) errors.push(what + ' id ' + id + ' is 0 or not unique');
    m.set(id, x);
  }
  return m;
};
const maps = byId(p.mapping, 'mapping'), funcs = byId(p.function, 'function'), locs = byId(p.location, 'location');
for (const l of p.location) {
  if (num(l.mappingId) && !maps.has(num(l.mappingId))) errors.push('location ' + l.id + ': no mapping ' + l.mappingId);
  for (const ln of l.line) if (!funcs.has(num(ln.functionId))) errors.push('location ' + l.id + ': no function ' + ln.functionId);
}
const flat = new Map(), labels = new Set();
let total = 0, total2 = 0;
const sums = p.sampleType.map(() => 0n);
for (const s of p.sample) {
  if (s.value.length !== p.sampleType.length) errors.push('a sample has ' + s.value.length + ' values');
  for (const id of s.locationId) if (!locs.has(num(id))) errors.push('a sample names no location ' + id);
  for (const l of s.label) labels.add(str(l.key) + (num(l.str) ? ':str' : ':num'));
  const n = num(s.value[0]);
  total += n;
  if (s.value.length > 1) total2 += num(s.value[1]);
  s.value.forEach((v, i) => { if (i < sums.length) sums[i] += BigInt(v); });
  let name = '(no frames)';
  if (s.locationId.length) {
    const loc = locs.get(num(s.locationId[0]));
    // the leaf's innermost line (inlined frames first) names the function
    if (loc && loc.line.length) name = str(funcs.get(num(loc.line[0].functionId)).name);
  }
  flat.set(name, (flat.get(name) || 0) + n);
}
if (errors.length) {
  for (const e of [...new Set(errors)].slice(0, 10)) console.log('error ' + e);
  process.exit(1);
}
console.log('info gzip ' + gz);
console.log('info sample_types ' + p.sampleType.map((t) => str(t.type) + '/' + str(t.unit)).join(','));
console.log('info period_type ' + (p.periodType ? str(p.periodType.type) + '/' + str(p.periodType.unit) : '-') + ' period ' + num(p.period));
console.log('info labels ' + [...labels].sort().join(','));
console.log('info counts samples=' + p.sample.length + ' locations=' + p.location.length + ' functions=' + p.function.length +
            ' mappings=' + p.mapping.length + ' strings=' + S.length + ' total=' + total);
console.log('info value1_total ' + total2);
console.log('info time_s ' + Math.floor(num(p.timeNanos) / 1e9) + ' duration_ms ' + Math.floor(num(p.durationNanos) / 1e6));
p.sampleType.forEach((t, i) => console.log('column ' + str(t.type) + '/' + str(t.unit) + ' ' + sums[i]));
for (const l of p.location) console.log('loc ' + num(l.id) + ' 0x' + BigInt(l.address).toString(16));
for (const [name, n] of [...flat].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) console.log('flat ' + n + ' ' + name);
