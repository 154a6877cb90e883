// Which node a process runs on, and whether its trace takes the node
// layout (io/node_file.h): from the launcher's environment, read once at
// initialisation (getenv; not async-signal-safe).
#pragma once

#include <cstddef>

namespace parlot::runtime {

/// The node's name for the node file "node-<name>.parlot", in `out`
/// (capacity `cap`, at least 2): PARLOT_NODE when set; else, with
/// PARLOT_NODE_RANKS=K and an MPI rank R in the environment
/// (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID), "ranks-<R/K*K>"
/// (K consecutive ranks as one simulated node); else Slurm's
/// SLURMD_NODENAME; else the host name (uname). Bytes other than letters,
/// digits, '.', '-' and '_' become '_'; cut to fit.
void node_name_from_environment(char* out, std::size_t cap);

/// Whether the trace takes the node layout: PARLOT_LAYOUT=node or
/// PARLOT_LAYOUT=process when set (anything else: a notice, then the
/// default); by default the node layout when a launcher says this process
/// is one rank of several (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
/// SLURM_NTASKS above 1), else the process layout.
bool node_layout_from_environment();

}  // namespace parlot::runtime
