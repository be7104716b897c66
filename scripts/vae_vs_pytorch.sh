#!/usr/bin/env bash
# fourfold's Wan VAE decode beside diffusers' (PyTorch eager, CPU) on the same diffusers folder, the same
# latents and the same tile settings, interleaved A B, each in its own process so that /usr/bin/time's peak RSS
# is the process peak of one engine, and diffusers with fourfold_torch.optimize as a third (KERNELS=torch leaves it
# out). Prints each run's frames/s and peak RSS, and the outputs' PSNR against diffusers'.
#   scripts/vae_vs_pytorch.sh FOURFOLD PYTHON OUT [PRESET] [T H W] [TILE STRIDE] [PAIRS]
# e.g. scripts/vae_vs_pytorch.sh build/release/fourfold build/pyenv/bin/python /tmp/vae wan2.1-vae 2 16 24 64 48 3
set -euo pipefail
ff="$1" py="$2" out="$3"; preset="${4:-wan2.1-vae}"; t="${5:-2}" h="${6:-16}" w="${7:-24}"
tile="${8:-64}" stride="${9:-48}" pairs="${10:-3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
[ -f "$out/$preset/config.json" ] || "$ff" make-model --preset "$preset" --dtype f32 --out "$out/$preset" >/dev/null
z=$("$py" -c "import json; print(json.load(open('$out/$preset/config.json'))['z_dim'])")
"$py" -c "import numpy as np; np.save('$out/z.npy', np.random.default_rng(0).standard_normal((1, $z, $t, $h, $w)).astype(np.float32))"
echo "vae: $preset, latents [1, $z, $t, $h, $w], tiles of $tile px every $stride, $pairs A B pairs"
for i in $(seq "$pairs"); do
  /usr/bin/time -f "peak_rss_kib %M" "$ff" vae decode --model "$out/$preset" --latents "$out/z.npy" --tile "$tile" \
    --tile-stride "$stride" --npy "$out/fourfold.npy" 2>&1 | grep -E "^throughput|^peak_rss" | sed "s/^/fourfold $i: /"
  PYTHONPATH="$root/python" /usr/bin/time -f "peak_rss_kib %M" "$py" -m fourfold_torch vae-decode --model "$out/$preset" \
    --latents "$out/z.npy" --tile "$tile" --tile-stride "$stride" --repeats 1 --out "$out/pytorch.npy" 2>&1 |
    grep -E "^throughput|^peak_rss" | sed "s/^/pytorch  $i: /"
  if [ "${KERNELS:-fourfold}" = fourfold ]; then
    PYTHONPATH="$root/python" /usr/bin/time -f "peak_rss_kib %M" "$py" -m fourfold_torch vae-decode --model "$out/$preset" \
      --latents "$out/z.npy" --tile "$tile" --tile-stride "$stride" --repeats 1 --kernels fourfold \
      --out "$out/optimize.npy" 2>&1 | grep -E "^throughput|^peak_rss" | sed "s/^/optimize $i: /"
  fi
done
"$py" -c "
import numpy as np
a, b = np.load('$out/fourfold.npy').astype(np.float64), np.load('$out/pytorch.npy').astype(np.float64)
mse = np.mean((a - b) ** 2); peak = np.max(np.abs(b))
print('outputs: fourfold vs diffusers PSNR %.1f dB, max abs %.3g' % (10 * np.log10(peak * peak / mse) if mse > 0 else float('inf'), np.max(np.abs(a - b))))
import os
if os.path.exists('$out/optimize.npy'):
    c = np.load('$out/optimize.npy').astype(np.float64); mse = np.mean((c - b) ** 2)
    print('outputs: optimize vs diffusers PSNR %.1f dB' % (10 * np.log10(peak * peak / mse) if mse > 0 else float('inf')))"
