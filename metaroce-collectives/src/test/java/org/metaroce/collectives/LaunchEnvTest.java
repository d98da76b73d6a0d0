// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Launcher environments [COLL-021..COLL-024]. */
class LaunchEnvTest {
    @Test
    @DisplayName("COLL-021: torchrun variables")
    void torchrun() {
        final LaunchEnv e = LaunchEnv.resolve(Map.of("RANK", "3", "WORLD_SIZE", "8", "MASTER_ADDR", "10.0.0.1",
            "MASTER_PORT", "29400"));
        assertThat(e).isEqualTo(new LaunchEnv(3, 8, "10.0.0.1", 29400, "torchrun"));
    }

    @Test
    @DisplayName("COLL-022: Open MPI needs MASTER_ADDR; the port defaults to 29500")
    void openMpi() {
        assertThat(LaunchEnv.resolve(Map.of("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
            "MASTER_ADDR", "h0"))).isEqualTo(new LaunchEnv(1, 2, "h0", 29500, "openmpi"));
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2")))
            .hasMessageContaining("MASTER_ADDR");
    }

    @Test
    @DisplayName("COLL-024: Slurm, master = first host of the node list")
    void slurm() {
        assertThat(LaunchEnv.resolve(Map.of("SLURM_PROCID", "2", "SLURM_NTASKS", "4", "SLURM_JOB_NODELIST",
            "node[01-04]"))).isEqualTo(new LaunchEnv(2, 4, "node01", 29500, "slurm"));
        assertThat(LaunchEnv.resolve(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "4", "SLURM_NODELIST",
            "gpu[7,9-12],cpu1", "MASTER_PORT", "1234"))).isEqualTo(new LaunchEnv(0, 4, "gpu7", 1234, "slurm"));
        assertThat(LaunchEnv.resolve(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_NODELIST", "a,b",
            "MASTER_ADDR", "explicit"))).extracting(LaunchEnv::masterAddress).isEqualTo("explicit");
    }

    @Test
    @DisplayName("COLL-024: Slurm node lists")
    void nodeLists() {
        assertThat(NodeList.firstHost("node[01-04]")).isEqualTo("node01");
        assertThat(NodeList.firstHost("node[007-010,12]")).isEqualTo("node007");
        assertThat(NodeList.firstHost("rack[3-4]-n[5-9],other")).isEqualTo("rack3-n5");
        assertThat(NodeList.firstHost("single")).isEqualTo("single");
        assertThat(NodeList.firstHost("a[1-2],b[3-4]")).isEqualTo("a1");
        assertThatThrownBy(() -> NodeList.firstHost("node[01-04")).hasMessageContaining("unbalanced");
        assertThatThrownBy(() -> NodeList.firstHost("")).hasMessageContaining("empty");
    }

    @Test
    @DisplayName("COLL-023: missing, malformed and contradictory variables are named")
    void errors() {
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of())).hasMessageContaining("no launcher variables");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("RANK", "0", "MASTER_ADDR", "h", "MASTER_PORT", "1")))
            .hasMessageContaining("WORLD_SIZE is not set");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("RANK", "x", "WORLD_SIZE", "2", "MASTER_ADDR", "h",
            "MASTER_PORT", "1"))).hasMessageContaining("RANK='x' is not an integer");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("RANK", "4", "WORLD_SIZE", "4", "MASTER_ADDR", "h",
            "MASTER_PORT", "1"))).hasMessageContaining("rank 4 is outside 0..3");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("RANK", "1", "WORLD_SIZE", "4", "MASTER_ADDR", "h")))
            .hasMessageContaining("MASTER_PORT is not set");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("RANK", "1", "WORLD_SIZE", "4", "MASTER_ADDR", "h",
            "MASTER_PORT", "1", "OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4")))
            .hasMessageContaining("contradictory").hasMessageContaining("OMPI_COMM_WORLD_RANK=2");
        assertThatThrownBy(() -> LaunchEnv.resolve(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2")))
            .hasMessageContaining("SLURM_JOB_NODELIST");
    }
}
