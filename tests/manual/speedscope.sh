#!/bin/sh
# By hand, not part of make test (CI installs no Chromium): symbolize --pprof of a node
# recording, loaded in speedscope (npm) in headless Chromium (Debian `chromium`).  Passes
# when speedscope names the profile in its title (it parsed it) and its left-heavy view
# holds the JIT functions; writes the screenshot to doc/pprof-speedscope.png.
#   npm install --no-save --prefix build/npm-tools speedscope@1.25.0; apt-get install chromium
#   sh tests/manual/speedscope.sh [SPEEDSCOPE_NPM_DIR]          (default build/npm-tools)
jt_name="speedscope"; . "$(dirname "$0")/../oracle/common.sh"
ss="${1:-$root/build/npm-tools}/node_modules/speedscope/dist/release"
[ -f "$ss/index.html" ] || jt_skip "speedscope not in ${1:-build/npm-tools} (npm install --no-save --prefix build/npm-tools speedscope@1.25.0)"
command -v chromium >/dev/null 2>&1 || jt_skip "chromium not installed (apt-get install chromium)"
command -v node >/dev/null 2>&1 || jt_skip "node not installed"
jt_need_perf
start=$(date +%s)
jt_record_node_g "$tmp/rec"
"$root/build/symbolize" --pprof "$tmp/node.pb" "$tmp/rec/perf.data" || { echo "FAIL speedscope: symbolize --pprof"; exit 0; }

# speedscope fetches the profile (#profileURL=): from a local HTTP server, since Chromium
# leaves a file:// fetch pending forever in headless mode
cat > "$tmp/serve.js" <<'EOF'
const http = require('http'), fs = require('fs'), path = require('path');
const [dir, prof] = process.argv.slice(2);
const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
               '.png': 'image/png', '.json': 'application/json'};
const srv = http.createServer((req, res) => {
  const u = decodeURIComponent(req.url.split('?')[0]);
  const f = u === '/node.pb' ? prof : path.join(dir, path.normalize(u === '/' ? '/index.html' : u));
  fs.readFile(f, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, {'Content-Type': types[path.extname(f)] || 'application/octet-stream'});
    res.end(data);
  });
});
srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
EOF
node "$tmp/serve.js" "$ss" "$tmp/node.pb" > "$tmp/port" & server=$!
jt_cleanup_hook() { kill "$server" 2>/dev/null; }
i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url="http://127.0.0.1:$(cat "$tmp/port")/index.html#profileURL=/node.pb&title=node%20--perf-prof&view=left-heavy"
chrome() { timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
  --user-data-dir="$tmp/chromium" --window-size=1400,900 --virtual-time-budget=10000 "$@" "$url" 2>/dev/null; }
chrome --dump-dom > "$tmp/dom.html"
chrome --screenshot="$tmp/shot.png" >/dev/null
if grep -q '<title>node --perf-prof - speedscope</title>' "$tmp/dom.html" && [ -s "$tmp/shot.png" ]; then
  cp "$tmp/shot.png" "$root/doc/pprof-speedscope.png"
  echo "PASS speedscope: loaded symbolize --pprof's profile ($(wc -c < "$tmp/node.pb") bytes), screenshot in doc/pprof-speedscope.png ($(($(date +%s) - start)) s)"
else echo "FAIL speedscope: title $(grep -o '<title>[^<]*' "$tmp/dom.html" | head -1), screenshot $(wc -c < "$tmp/shot.png" 2>/dev/null || echo none)"; fi
