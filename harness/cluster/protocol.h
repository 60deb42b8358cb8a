// What a multi-node run's coordinator and agents say to each other, one JSON
// object per line (link.h), each with a "type":
//
//   agent -> coordinator   hello   {token, node, host, pid}
//   coordinator -> agent   ping    {id}              (clock sync, clock_sync.h)
//   agent -> coordinator   pong    {id, t}           (t: the agent's monotonic ns)
//   coordinator -> agent   start   {scenario, file, scenario_dir, vars, seed, out_dir,
//                                   options, coordinator: {address, port}}
//   agent -> coordinator   obs     {o}               (an observation, as it is recorded)
//   agent -> coordinator   origin  {t}               (the agent clock at its run's time 0)
//   agent -> coordinator   progress {}               (its job moved: at most every 250 ms)
//   coordinator -> agent   progress {}               (another node's job moved: no_hang's
//                                                     stall rule holds across the nodes)
//   agent -> coordinator   trigger {fault, point, hit} (a point here matched the trigger of
//                                                     a fault that belongs to another node)
//   coordinator -> agent   fire    {fault, from, point, hit} (fire that fault of yours:
//                                                     node `from` reached its point)
//   agent -> coordinator   result  {facts, device, verdict, verdict_reason, error, faults}
//   coordinator -> agent   finish  {}                (every node is done: heal, exit)
//   either way             error   {text}
#pragma once

namespace aftermath::protocol {

inline constexpr int kVersion = 1;
// The agent's exit codes: 0 done, 2 a bad start (the scenario did not parse
// on the node, a wrong token), 3 the coordinator could not be reached or left.
inline constexpr int kAgentBadStart = 2;
inline constexpr int kAgentLostCoordinator = 3;

}  // namespace aftermath::protocol
