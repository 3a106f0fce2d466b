// QoS tests across processes: being written.
