// The program that builds the tests' precompiled header (tests/CMakeLists.txt, axon_test_pch): the header itself
// is made by CMake from the list there. A program, not a library, so that it is compiled with the flags of the
// test programs that reuse the header (-fPIE, not a library's -fPIC: GCC refuses a header built with another).
int main() { return 0; }
