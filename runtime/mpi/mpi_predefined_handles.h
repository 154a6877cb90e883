/* Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE, ...) are
   addresses of globals in libmpi. libparlotmpi.so does not link libmpi (it
   must load into programs without MPI), so it refers to them weakly: they
   resolve when libmpi is among the program's objects, and are null
   otherwise (then no MPI call is made through the wrappers either). MPICH's
   handles are integer constants and need nothing. Include after <mpi.h>. */
#pragma once

#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_mpi_op_prod
#pragma weak ompi_mpi_op_land
#pragma weak ompi_mpi_op_band
#pragma weak ompi_mpi_op_lor
#pragma weak ompi_mpi_op_bor
#pragma weak ompi_mpi_op_lxor
#pragma weak ompi_mpi_op_bxor
#pragma weak ompi_mpi_op_minloc
#pragma weak ompi_mpi_op_maxloc
#pragma weak ompi_mpi_op_replace
#pragma weak ompi_mpi_op_no_op
#pragma weak ompi_mpi_op_null
#endif
#pragma weak MPI_F_STATUS_IGNORE
#pragma weak MPI_F_STATUSES_IGNORE
