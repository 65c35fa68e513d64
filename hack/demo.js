// The demo scenario on the running local control plane (.local/kubeconfig).
import { execFileSync } from 'node:child_process';

const kubectl = (...args) => execFileSync('.local/bin/kubectl', ['--kubeconfig', '.local/kubeconfig', ...args], { encoding: 'utf8' });

console.log('== the API server');
console.log(kubectl('version'));
console.log('Stop it with: npm run cluster:down');
