#include "src/tools/axon/text_table.hpp"

#include <gtest/gtest.h>

namespace axon::tools {
namespace {

TEST(TextTable, PadsColumnsToTheWidestCellTwoSpacesApart) {
  TextTable sut({"NAME", "RATE", "NOTE"});
  sut.add_row({"lidar", "10", "ok"});
  sut.add_row({"camera_front", "30", "late"});

  EXPECT_EQ(sut.render(),
            "NAME          RATE  NOTE\n"
            "lidar         10    ok\n"
            "camera_front  30    late\n");
}

TEST(TextTable, EmptyCellsAtTheEndOfARowLeaveNoTrailingSpaces) {
  TextTable sut({"KIND", "NODE", "QOS"});
  sut.add_row({"publisher", "camera", ""});
  sut.add_row({"subscriber", "planner", "depth 8"});

  EXPECT_EQ(sut.render(),
            "KIND        NODE     QOS\n"
            "publisher   camera\n"
            "subscriber  planner  depth 8\n");
}

TEST(TextTable, RightAlignsColumnsAskedTo) {
  TextTable sut({"TOPIC", "HZ"});
  sut.set_align(1, Align::kRight);
  sut.add_row({"a", "5"});
  sut.add_row({"b", "1000"});

  EXPECT_EQ(sut.render(),
            "TOPIC    HZ\n"
            "a         5\n"
            "b      1000\n");
}

TEST(TextTable, CountsUtf8CharactersNotBytes) {
  TextTable sut({"UNIT", "X"});
  sut.add_row({"µs", "1"});
  sut.add_row({"ns", "2"});

  EXPECT_EQ(sut.render(),
            "UNIT  X\n"
            "µs    1\n"
            "ns    2\n");
  EXPECT_EQ(display_width("µs"), 2U);
}

TEST(TextTable, LeavesNoTrailingSpacesWhenTheLastColumnIsShort) {
  TextTable sut({"A", "LONG HEADER"});
  sut.add_row({"x", "y"});

  EXPECT_EQ(sut.render(), "A  LONG HEADER\nx  y\n");
  EXPECT_EQ(sut.rows(), 1U);
}

}  // namespace
}  // namespace axon::tools
