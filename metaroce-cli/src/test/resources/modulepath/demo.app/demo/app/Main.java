// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package demo.app;

import java.net.InetAddress;

import org.metaroce.collectives.CommConfig;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;

/** Uses the exported API, then tries the wire flyweights reflectively (ModulePathTest). */
public final class Main {
    private Main() {
    }

    public static void main(final String[] args) throws Exception {
        for (final Class<?> c : new Class<?>[] {Endpoint.class, MetaRoceDevice.class, CommConfig.class}) {
            System.out.println("module " + c.getModule().getName() + " named=" + c.getModule().isNamed());
        }
        try {
            new Endpoint(new EndpointConfig(), new SeededRandomSource(1));
            System.out.println("endpoint ok");
            try (MetaRoceDevice device = new MetaRoceDevice(
                new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0))) {
                System.out.println("device ok on " + device.localAddress() + " transport " + device.transport());
            }
        } catch (final IllegalStateException e) {
            System.out.println(e.getMessage());
            System.exit(3);
        }
        System.out.println("communicator config ok: " + new CommConfig().copy().getClass().getSimpleName());
        final Module core = Endpoint.class.getModule();
        System.out.println("wire exported to demo.app: " + core.isExported("org.metaroce.core.wire", Main.class.getModule()));
        System.out.println("wire exported to org.metaroce.netty: "
            + core.isExported("org.metaroce.core.wire", MetaRoceDevice.class.getModule()));
        try {
            final Class<?> header = Class.forName("org.metaroce.core.wire.BaseHeader");
            header.getConstructor().newInstance();
            System.out.println("wire accessible");
        } catch (final IllegalAccessException e) {
            System.out.println("wire refused: " + e);
        }
    }
}
