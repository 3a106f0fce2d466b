# Runs after the whole suite (ctest fixture cleanup): every test's processes
# have exited, so no axon file may be left in the shm directory.
if(NOT DEFINED DIR)
  set(DIR /dev/shm)
endif()
file(GLOB leftovers LIST_DIRECTORIES false "${DIR}/axon_*")
if(leftovers)
  list(JOIN leftovers "\n  " listed)
  message(FATAL_ERROR "files left in ${DIR} after the test suite (a participant did not clean up):\n  ${listed}")
endif()
message(STATUS "${DIR} holds no axon files")
