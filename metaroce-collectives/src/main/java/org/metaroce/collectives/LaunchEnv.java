// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.util.Map;

/**
 * Where this process sits in a job, read from the launcher's environment [COLL-021..COLL-024]:
 * torchrun ({@code RANK}, {@code WORLD_SIZE}, {@code MASTER_ADDR}, {@code MASTER_PORT}), Open MPI
 * ({@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE}, with {@code MASTER_ADDR}) or
 * Slurm ({@code SLURM_PROCID}, {@code SLURM_NTASKS}, master = first host of
 * {@code SLURM_JOB_NODELIST}/{@code SLURM_NODELIST} unless {@code MASTER_ADDR} is set).
 *
 * @param rank this process's rank
 * @param worldSize number of ranks
 * @param masterAddress host of the rendezvous (rank 0)
 * @param masterPort TCP port of the rendezvous
 * @param launcher which variables were used ({@code torchrun}, {@code openmpi}, {@code slurm}, {@code explicit})
 */
public record LaunchEnv(int rank, int worldSize, String masterAddress, int masterPort, String launcher) {
    /** Rendezvous port when neither {@code MASTER_PORT} nor an explicit port is given (torchrun's default). */
    public static final int DEFAULT_MASTER_PORT = 29500;

    /** Validates the values, naming the one that is wrong. */
    public LaunchEnv {
        if (worldSize < 1) {
            throw new IllegalArgumentException(launcher + ": world size must be >= 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException(launcher + ": rank " + rank + " is outside 0.." + (worldSize - 1)
                + " (world size " + worldSize + ")");
        }
        if (masterAddress == null || masterAddress.isBlank()) {
            throw new IllegalArgumentException(launcher + ": no master address (set MASTER_ADDR)");
        }
        if (masterPort < 1 || masterPort > 65535) {
            throw new IllegalArgumentException(launcher + ": master port must be in 1..65535, got " + masterPort);
        }
    }

    /** @return the launch described by this process's environment */
    public static LaunchEnv fromEnvironment() {
        return resolve(System.getenv());
    }

    /**
     * Reads the first launcher whose variables are present, in the order torchrun, Open MPI,
     * Slurm [COLL-022]. A launcher's variables must be complete and well formed; torchrun's and
     * Open MPI's must agree when both are present [COLL-023].
     *
     * @param env environment variables
     * @return the launch
     * @throws IllegalArgumentException naming the missing, malformed or contradictory variable
     */
    public static LaunchEnv resolve(final Map<String, String> env) {
        final boolean torch = env.containsKey("RANK") || env.containsKey("WORLD_SIZE");
        final boolean ompi = env.containsKey("OMPI_COMM_WORLD_RANK") || env.containsKey("OMPI_COMM_WORLD_SIZE");
        final boolean slurm = env.containsKey("SLURM_PROCID") || env.containsKey("SLURM_NTASKS");
        if (torch) {
            final int rank = integer(env, "RANK", "torchrun");
            final int size = integer(env, "WORLD_SIZE", "torchrun");
            if (ompi) {
                final int orank = integer(env, "OMPI_COMM_WORLD_RANK", "openmpi");
                final int osize = integer(env, "OMPI_COMM_WORLD_SIZE", "openmpi");
                if (orank != rank || osize != size) {
                    throw new IllegalArgumentException("contradictory launch variables: RANK=" + rank + " WORLD_SIZE="
                        + size + " but OMPI_COMM_WORLD_RANK=" + orank + " OMPI_COMM_WORLD_SIZE=" + osize);
                }
            }
            return new LaunchEnv(rank, size, required(env, "MASTER_ADDR", "torchrun"),
                port(env, "torchrun", true), "torchrun");
        }
        if (ompi) {
            return new LaunchEnv(integer(env, "OMPI_COMM_WORLD_RANK", "openmpi"),
                integer(env, "OMPI_COMM_WORLD_SIZE", "openmpi"),
                required(env, "MASTER_ADDR", "openmpi (Open MPI does not name a master: export MASTER_ADDR)"),
                port(env, "openmpi", false), "openmpi");
        }
        if (slurm) {
            String master = env.get("MASTER_ADDR");
            if (master == null || master.isBlank()) {
                final String list = env.getOrDefault("SLURM_JOB_NODELIST", env.get("SLURM_NODELIST"));
                if (list == null || list.isBlank()) {
                    throw new IllegalArgumentException("slurm: neither MASTER_ADDR nor SLURM_JOB_NODELIST/SLURM_NODELIST "
                        + "is set");
                }
                master = NodeList.firstHost(list);
            }
            return new LaunchEnv(integer(env, "SLURM_PROCID", "slurm"), integer(env, "SLURM_NTASKS", "slurm"), master,
                port(env, "slurm", false), "slurm");
        }
        throw new IllegalArgumentException("no launcher variables found: set RANK, WORLD_SIZE, MASTER_ADDR and "
            + "MASTER_PORT (torchrun), run under Open MPI (OMPI_COMM_WORLD_RANK/SIZE plus MASTER_ADDR) or Slurm "
            + "(SLURM_PROCID, SLURM_NTASKS), or pass rank, world size and master explicitly");
    }

    private static String required(final Map<String, String> env, final String name, final String launcher) {
        final String v = env.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(launcher + ": " + name + " is not set");
        }
        return v.trim();
    }

    private static int integer(final Map<String, String> env, final String name, final String launcher) {
        final String v = required(env, name, launcher);
        try {
            return Integer.parseInt(v);
        } catch (final NumberFormatException ex) {
            throw new IllegalArgumentException(launcher + ": " + name + "='" + v + "' is not an integer", ex);
        }
    }

    private static int port(final Map<String, String> env, final String launcher, final boolean required) {
        if (!required && !env.containsKey("MASTER_PORT")) {
            return DEFAULT_MASTER_PORT;
        }
        return integer(env, "MASTER_PORT", launcher);
    }
}
