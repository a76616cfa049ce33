// The variant matrix of one release as a grid: a row per Python (cp312, cp314t, py3), a column
// per build family (CUDA × torch × SM, or ROCm, CPU, none) headed by its variant index
// selector, each cell the files of that pair.

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
  if (variant.cuda) return `cu${variant.cuda}`;
  if (variant.rocm) return `rocm${variant.rocm}`;
  if (variant.xpu) return 'xpu';
  if (variant.cpu) return 'cpu';
  return '';
}

// The column a build goes in, in the words the variant indexes take: "cu130 · torch2.10 · sm89"
// (the server's "family"); "any" only for a pure wheel, "no variant" for a platform build whose
// name says nothing of the machine.
export function familyLabel(build) {
  return build.family;
}

// Columns sort by accelerator, then torch, SM and C++ ABI, as numbers where they are numbers.
function familyKey(variant) {
  return [accelerator(variant), variant.torch ?? '', variant.sm ?? '', variant.cxx11abi ?? ''];
}

// A PEP 825 column sorts by its properties, as a local label's by its words: the CUDA lower bound,
// then its SM architectures as numbers (sm_arch 90_real is SM 9.0, lowest first), then the label,
// so cu128_sm90 comes before cu128_sm120. The null variant has none and sorts first.
function pep825Key(pep825) {
  const values = (feature) => pep825.properties.map((property) => property.split(' :: '))
    .filter(([, name]) => name === feature).map(([, , value]) => value);
  const cuda = values('cuda_version_lower_bound').sort(naturalCompare)[0];
  const sm = values('sm_arch').map((value) => Number.parseInt(value, 10)).filter((n) => !Number.isNaN(n))
    .sort((a, b) => a - b).map((n) => `${Math.floor(n / 10)}.${n % 10}`);
  return [cuda ? `cu${cuda}` : '', '', sm.join(','), pep825.label];
}

function compareKeys(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    const order = naturalCompare(String(a[i]), String(b[i]));
    if (order !== 0) return order;
  }
  return 0;
}

// {rows: ['cp312', ...], columns: [{label, selectors: ['cu130-torch2.10-sm89'], pep825}],
//  cells: Map('row\u0000label' -> [build]), sdists: [build]}. A column's selectors are its
// builds' first (most specific) selectors, each once: the variant index that column answers.
// Source distributions have no Python or family: they are listed apart, in `sdists`.
export function layoutMatrix(builds) {
  const rows = new Set();
  const columns = new Map();
  const cells = new Map();
  const sdists = [];
  for (const build of builds) {
    if (build.packagetype === 'sdist') {
      sdists.push(build);
      continue;
    }
    const row = pythonLabel(build);
    const label = familyLabel(build);
    rows.add(row);
    // A PEP 825 label means one set of properties per release (the server refuses others).
    if (!columns.has(label)) {
      const key = build.pep825 ? pep825Key(build.pep825) : familyKey(build.variant);
      columns.set(label, {label, key, selectors: [], pep825: build.pep825 ?? null});
    }
    const column = columns.get(label);
    const selector = build.selectors?.[0];
    if (selector && !column.selectors.includes(selector)) column.selectors.push(selector);
    const key = `${row}\u0000${label}`;
    if (!cells.has(key)) cells.set(key, []);
    cells.get(key).push(build);
  }
  return {
    rows: [...rows].sort(naturalCompare),
    columns: [...columns.values()].sort((a, b) => compareKeys(a.key, b.key))
      .map(({label, selectors, pep825}) => ({label, selectors: selectors.sort(naturalCompare), pep825})),
    cells,
    sdists,
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
