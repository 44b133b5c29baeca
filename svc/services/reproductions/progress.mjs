// A Playwright reporter for svc's runner: each step of the test as it begins and ends, and the
// test's end, appended to the run's progress file as they happen, so that a run killed at its
// limit still says which step it was on.
import { appendFileSync } from 'node:fs';

export default class Progress {
  constructor() {
    this.file = process.env.SVC_REPRO_PROGRESS;
  }

  note(record) {
    appendFileSync(this.file, JSON.stringify(record) + '\n');
  }

  onStepBegin(test, result, step) {
    if (step.category === 'test.step') this.note({ step: step.title });
  }

  onStepEnd(test, result, step) {
    if (step.category !== 'test.step') return;
    this.note({ stepEnd: step.title, error: step.error ? step.error.message || 'failed' : null });
  }

  onTestEnd(test, result) {
    this.note({ end: result.status, error: result.error ? result.error.message || '' : null,
                annotations: [...(result.annotations || []), ...test.annotations]
                  .map((annotation) => annotation.description) });
  }

  onError(error) {
    this.note({ error: error.message || String(error) });
  }

  printsToStdio() {
    return false;
  }
}
