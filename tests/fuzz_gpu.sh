#!/bin/bash
# P parallel fuzz processes over seeds START..START+P*N-1 on the CUDA backend, spread over the
# visible GPUs; the summary and every failure are written under $OUT.
P=${1:-64}; N=${2:-157}; START=${3:-0}; LIMIT=${4:-450}; GPUS=${5:-4}; SIZES=${6:-small}
rm -rf /tmp/fz; mkdir -p /tmp/fz
for k in $(seq 0 $((P - 1))); do
  s=$((START + k * N))
  CUDA_VISIBLE_DEVICES=$((k % GPUS)) FUZZ_FAILURES=/tmp/fz/fail_$k.txt timeout $LIMIT \
    python tests/fuzz_long.py $N $s cuda $SIZES > /tmp/fz/fuzz_$k.log 2>&1 &
done
wait
cat /tmp/fz/fail_*.txt > $OUT/failures.txt 2>/dev/null
python - <<'PY' | tee $OUT/summary.txt
import ast, glob, re
total = {"ok": 0, "unsupported": 0, "undefined": 0, "failed": 0}; done = 0
for path in glob.glob("/tmp/fz/fuzz_*.log"):
    lines = [l for l in open(path) if "programs:" in l]
    if lines:
        m = re.match(r"(\d+)/(\d+) programs: (\{.*\})", lines[-1])
        done += int(m.group(1))
        for k, v in ast.literal_eval(m.group(3)).items(): total[k] += v
print("programs checked:", done, total)
PY
grep "=== seed" $OUT/failures.txt | head -50
