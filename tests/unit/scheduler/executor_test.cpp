// Scheduler tests: being written.
