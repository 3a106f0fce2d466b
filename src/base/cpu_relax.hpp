// The one spin-wait hint axon uses: tells the core that this thread is
// polling, so that it lets its sibling hyper-thread run and does not
// mis-speculate the loop's exit (x86 `pause`, aarch64 `yield`).
#pragma once

namespace axon {

/// One pause in a polling loop: x86 `pause`, aarch64 `yield`, elsewhere a
/// compiler barrier (the loop's loads are not hoisted out of it). Never a
/// system call, never a memory barrier for other threads.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

}  // namespace axon
