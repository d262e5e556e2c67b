"""What records: LeRobot glue, above storage/ (which imports no LeRobot) and below cli/ (which only parses and calls).

- loop.py: the recording loop (RecordingSession: control ticks, episodes, keys, device faults, the paired commit)
  and its plan (EpisodePlan);
- options.py: what teledex-record adds to lerobot-record's flags (RecordOptions; no LeRobot import, so that
  `teledex-record --help` answers without loading it);
- recorder.py: the recording driver (Recorder, from a TeledexRecordConfig): the robot, the teleoperator, the two
  sinks (the LeRobot dataset, the native session) and the loop;
- lerobot_dataset.py: the LeRobot sink, its features and columns, the video encoder both formats share;
- conversions.py: native layout <-> LeRobotDataset, through the same sinks;
- hub.py: both formats pushed to the Hugging Face Hub with their cards (teledex-push, --dataset.push_to_hub).

Nothing is imported here: importing the package loads no LeRobot.
"""
