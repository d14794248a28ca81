import { ensureTestBuild } from '../support/test-build';

export default function setup(): void {
  ensureTestBuild();
}
