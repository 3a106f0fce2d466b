#!/usr/bin/env python3
"""Writes autoware.yaml: an Autoware-sized scenario (bench/scenarios/README in
docs/performance.md, "Scenario files"). About 30 processes and 250 topics at
the rates and sizes of an Autoware Universe stack on one vehicle: each
component publishes its real outputs, plus the debug and marker topics its
nodes publish, which three tool processes (rviz, rosbag, a diagnostics GUI)
subscribe. Sizes and counts are bounded by today's domain limits (256 topics,
512 subscribers per domain, 32 publishers per node): pass --topics/--debug to
grow it once they are raised.

    python3 bench/scenarios/make_autoware.py > bench/scenarios/autoware.yaml
"""
import argparse

# name: (publishes [(topic, payload, rate_hz)], subscribes [topic])
MAIN = [
    ("lidar_top", [("sensing/lidar/top/pointcloud_raw", "4 MiB", 10)], []),
    ("lidar_left", [("sensing/lidar/left/pointcloud_raw", "1 MiB", 10)], []),
    ("lidar_right", [("sensing/lidar/right/pointcloud_raw", "1 MiB", 10)], []),
    ("lidar_rear", [("sensing/lidar/rear/pointcloud_raw", "1 MiB", 10)], []),
    ("pointcloud_preprocessor", [("sensing/lidar/concatenated/pointcloud", "4 MiB", 10),
                                 ("sensing/lidar/no_ground/pointcloud", "2 MiB", 10)],
     ["sensing/lidar/top/pointcloud_raw", "sensing/lidar/left/pointcloud_raw",
      "sensing/lidar/right/pointcloud_raw", "sensing/lidar/rear/pointcloud_raw", "vehicle/status/velocity"]),
    ("camera_front", [("sensing/camera/front/image_raw", "4 MiB", 30),
                      ("sensing/camera/front/camera_info", "512", 30)], []),
    ("camera_sides", [("sensing/camera/left/image_raw", "2 MiB", 15),
                      ("sensing/camera/right/image_raw", "2 MiB", 15),
                      ("sensing/camera/left/camera_info", "512", 15),
                      ("sensing/camera/right/camera_info", "512", 15)], []),
    ("camera_rear", [("sensing/camera/rear/image_raw", "2 MiB", 15),
                     ("sensing/camera/rear/camera_info", "512", 15)], []),
    ("radar", [("sensing/radar/front/objects", "16 KiB", 20),
               ("sensing/radar/rear/objects", "16 KiB", 20)], []),
    ("gnss_imu", [("sensing/imu/imu_data", "320", 200), ("sensing/gnss/pose_with_covariance", "384", 10),
                  ("sensing/gnss/fix", "128", 10)], []),
    ("vehicle_interface", [("vehicle/status/velocity", "64", 100), ("vehicle/status/steering", "64", 100),
                           ("vehicle/status/gear", "64", 10), ("vehicle/status/control_mode", "64", 10),
                           ("vehicle/status/battery", "64", 1)],
     ["control/command/control_cmd", "control/command/gear_cmd", "control/command/turn_indicators_cmd"]),
    ("ndt_scan_matcher", [("localization/pose_estimator/pose_with_covariance", "384", 10),
                          ("localization/pose_estimator/points_aligned", "1 MiB", 10)],
     ["sensing/lidar/concatenated/pointcloud", "localization/kinematic_state", "map/pointcloud_map"]),
    ("ekf_localizer", [("localization/kinematic_state", "768", 50), ("localization/tf", "256", 50),
                       ("localization/acceleration", "128", 50)],
     ["localization/pose_estimator/pose_with_covariance", "sensing/imu/imu_data", "vehicle/status/velocity",
      "sensing/gnss/pose_with_covariance"]),
    ("map_loader", [("map/vector_map", "8 MiB", 1), ("map/pointcloud_map", "8 MiB", 1)], []),
    ("lidar_centerpoint", [("perception/object_recognition/detection/centerpoint/objects", "64 KiB", 10)],
     ["sensing/lidar/no_ground/pointcloud"]),
    ("camera_detector", [("perception/object_recognition/detection/rois0", "8 KiB", 30),
                         ("perception/object_recognition/detection/rois1", "8 KiB", 15),
                         ("perception/object_recognition/detection/rois2", "8 KiB", 15)],
     ["sensing/camera/front/image_raw", "sensing/camera/left/image_raw", "sensing/camera/right/image_raw",
      "sensing/camera/front/camera_info"]),
    ("object_fusion_tracker", [("perception/object_recognition/detection/objects", "64 KiB", 10),
                               ("perception/object_recognition/tracking/objects", "64 KiB", 10)],
     ["perception/object_recognition/detection/centerpoint/objects",
      "perception/object_recognition/detection/rois0", "perception/object_recognition/detection/rois1",
      "perception/object_recognition/detection/rois2", "sensing/radar/front/objects",
      "sensing/radar/rear/objects", "localization/kinematic_state"]),
    ("map_based_prediction", [("perception/object_recognition/objects", "128 KiB", 10)],
     ["perception/object_recognition/tracking/objects", "map/vector_map", "localization/kinematic_state"]),
    ("occupancy_grid", [("perception/occupancy_grid_map/map", "1 MiB", 10)],
     ["sensing/lidar/no_ground/pointcloud", "localization/kinematic_state"]),
    ("traffic_light", [("perception/traffic_light_recognition/traffic_signals", "2 KiB", 10)],
     ["sensing/camera/front/image_raw", "map/vector_map"]),
    ("mission_planner", [("planning/mission_planning/route", "16 KiB", 1)],
     ["map/vector_map", "localization/kinematic_state"]),
    ("behavior_path_planner", [("planning/behavior_planning/path_with_lane_id", "64 KiB", 10),
                               ("planning/behavior_planning/path_candidate", "64 KiB", 10)],
     ["planning/mission_planning/route", "perception/object_recognition/objects",
      "perception/occupancy_grid_map/map", "localization/kinematic_state", "map/vector_map"]),
    ("behavior_velocity_planner", [("planning/behavior_planning/path", "64 KiB", 10)],
     ["planning/behavior_planning/path_with_lane_id", "perception/traffic_light_recognition/traffic_signals",
      "perception/object_recognition/objects", "localization/kinematic_state"]),
    ("motion_planner", [("planning/scenario_planning/trajectory", "32 KiB", 10)],
     ["planning/behavior_planning/path", "perception/object_recognition/objects",
      "localization/kinematic_state", "localization/acceleration"]),
    ("trajectory_follower", [("control/trajectory_follower/control_cmd", "128", 30)],
     ["planning/scenario_planning/trajectory", "localization/kinematic_state", "vehicle/status/steering",
      "localization/acceleration"]),
    ("vehicle_cmd_gate", [("control/command/control_cmd", "128", 30), ("control/command/gear_cmd", "64", 10),
                          ("control/command/turn_indicators_cmd", "64", 10)],
     ["control/trajectory_follower/control_cmd", "vehicle/status/control_mode"]),
    ("system_monitor", [("system/diagnostics", "4 KiB", 10), ("system/heartbeat", "64", 10)], []),
]
TOOLS = ["rviz", "rosbag_recorder", "diagnostics_gui"]
# Outputs the tools subscribe besides the debug topics.
TOOL_MAIN = ["perception/object_recognition/objects", "planning/scenario_planning/trajectory",
             "localization/kinematic_state", "system/diagnostics", "control/command/control_cmd"]
DEBUG_SIZES = [("1 KiB", 10), ("4 KiB", 10), ("16 KiB", 10), ("64 KiB", 5), ("256", 10), ("2 KiB", 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, default=250, help="topics in all (main topics plus debug topics)")
    ap.add_argument("--duration", type=int, default=60)
    args = ap.parse_args()
    main_topics = sum(len(p) for _, p, _ in MAIN)
    debug_total = max(0, args.topics - main_topics)
    publishers = [c for c, _, _ in MAIN]
    debug = {c: [] for c in publishers}
    for i in range(debug_total):
        c = publishers[i % len(publishers)]
        size, rate = DEBUG_SIZES[i % len(DEBUG_SIZES)]
        debug[c].append((f"debug/{c}/marker_{len(debug[c])}", size, rate))
    out = []
    out.append("# Generated by bench/scenarios/make_autoware.py: an Autoware-sized stack on one vehicle (sensing,")
    out.append("# localization, perception, planning, control, system) plus the debug and marker topics its")
    out.append("# nodes publish, subscribed by three tool processes. Run it with")
    out.append("#   axon-bench scenario bench/scenarios/autoware.yaml            (60 s)")
    out.append("# Bounded by today's domain limits (256 topics, 512 subscribers): regenerate with")
    out.append("#   python3 bench/scenarios/make_autoware.py --topics 2000 > bench/scenarios/autoware.yaml")
    out.append("# once they are raised.")
    out.append("name: autoware-sized")
    out.append("description: >-")
    out.append(f"  {len(MAIN) + len(TOOLS)} processes, {main_topics + debug_total} topics: 4 lidars 10 Hz 1-4 MiB,"
               " 4 cameras 15-30 Hz 2-4 MiB, radar, IMU 200 Hz, localization 50 Hz, perception 10 Hz 64-128 KiB,"
               " planning 10 Hz, control 30 Hz, and debug markers 1-10 Hz 256 B - 64 KiB")
    out.append(f"duration_s: {args.duration}")
    out.append("warmup_s: 2")
    out.append("wait: blocking")
    out.append("")
    out.append("topics:")
    for c, pubs, _ in MAIN:
        for name, size, rate in pubs + debug[c]:
            payload = size if " " in size else size
            out.append(f"  - {{name: {name}, payload: {payload}, rate_hz: {rate}}}")
    out.append("")
    out.append("components:")
    for c, pubs, subs in MAIN:
        out.append(f"  - name: {c}")
        out.append(f"    publishes: [{', '.join(n for n, _, _ in pubs + debug[c])}]")
        if subs:
            out.append(f"    subscribes: [{', '.join(subs)}]")
    all_debug = [n for c in publishers for n, _, _ in debug[c]]
    for k, tool in enumerate(TOOLS):
        mine = all_debug[k::len(TOOLS)] + TOOL_MAIN
        out.append(f"  - name: {tool}")
        out.append(f"    subscribes: [{', '.join(mine)}]")
    print("\n".join(out))


if __name__ == "__main__":
    main()
