# Links with LLVM's lld (apt: lld) when the compiler accepts it. The build's
# links are many large test programs: axon_unit_tests under ASan linked in
# 21 s with GNU ld and 8 s with lld (2026-12-05, the same objects), and each
# CI stage links some forty programs. AXON_USE_LLD=OFF keeps the system's
# default linker. The installed package carries no linker choice.
option(AXON_USE_LLD "Link with lld when the compiler accepts -fuse-ld=lld" ON)
if(AXON_USE_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" AXON_LLD_LINKS)
  if(AXON_LLD_LINKS)
    add_link_options(-fuse-ld=lld)
  else()
    message(STATUS "axon: lld not found (apt: lld); linking with the default linker")
  endif()
endif()
