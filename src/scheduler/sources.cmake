# Sources of the scheduler layer (executors, wait sets, wait strategies).
target_sources(axon PRIVATE)
