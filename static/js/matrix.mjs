// The variant matrix of one release as a grid: a row per Python (cp312, cp314t, py3), a column
// per build family (CUDA × torch × SM, or ROCm, CPU, none), each cell the files of that pair.

import {naturalCompare} from './dom.mjs';

// The interpreter a build is for: the ABI tag where it names one (cp314t for free-threaded
// builds, whose Python tag is plain cp314), else the Python tag.
export function pythonLabel(build) {
  const abi = build.abi_tag;
  if (abi === 'none') return build.python_tag;
  if (abi === 'abi3') return `${build.python_tag} abi3`;
  return /^(cp|pp)\d/.test(abi) ? abi : `${build.python_tag}-${abi}`;
}

function accelerator(variant) {
  if (variant.cuda) return `CUDA ${variant.cuda}`;
  if (variant.rocm) return `ROCm ${variant.rocm}`;
  if (variant.xpu) return 'XPU';
  if (variant.cpu) return 'CPU';
  return '';
}

// "CUDA 13.0 · torch 2.10.0 · sm 8.9"; "any" for a build without a variant.
export function familyLabel(variant) {
  const parts = [accelerator(variant)];
  if (variant.torch) parts.push(`torch ${variant.torch}${variant.torch_and_higher ? '+' : ''}`);
  if (variant.sm) parts.push(`sm ${variant.sm}`);
  if (variant.cxx11abi !== undefined) parts.push(`cxx11abi ${variant.cxx11abi ? 'TRUE' : 'FALSE'}`);
  const label = parts.filter(Boolean).join(' · ');
  return label || 'any';
}

function familyKey(variant) {
  return [accelerator(variant), variant.torch ?? '', variant.sm ?? '', variant.cxx11abi ?? ''];
}

function compareKeys(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    const order = naturalCompare(String(a[i]), String(b[i]));
    if (order !== 0) return order;
  }
  return 0;
}

// {rows: ['cp312', ...], columns: [{label, key}], cells: Map('row\u0000column' -> [build])}
export function layoutMatrix(builds) {
  const rows = new Set();
  const columns = new Map();
  const cells = new Map();
  for (const build of builds) {
    const row = pythonLabel(build);
    const label = familyLabel(build.variant);
    rows.add(row);
    if (!columns.has(label)) columns.set(label, familyKey(build.variant));
    const key = `${row}\u0000${label}`;
    if (!cells.has(key)) cells.set(key, []);
    cells.get(key).push(build);
  }
  return {
    rows: [...rows].sort(naturalCompare),
    columns: [...columns].sort((a, b) => compareKeys(a[1], b[1])).map(([label]) => label),
    cells,
  };
}

// The variant index to install a build from: its most specific selector, or the plain index
// for builds without a variant (every variant index lists those too).
export function indexUrlFor(build, origin) {
  const selector = build.selectors?.[0];
  return selector ? `${origin}/variants/${selector}/simple/` : `${origin}/simple/`;
}

export function installLines(projectName, build, origin) {
  const requirement = `"${projectName}==${build.version}"`;
  const index = indexUrlFor(build, origin);
  return {
    pip: `pip install ${requirement} --extra-index-url ${index}`,
    uv: `uv pip install ${requirement} --extra-index-url ${index}`,
  };
}
