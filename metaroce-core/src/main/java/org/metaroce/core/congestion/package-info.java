/**
 * Congestion control behind one small interface, chosen per queue pair. The engine asks for a
 * window (and later pacing) and feeds back acknowledgements, RTT samples, ECN echoes and losses.
 */
package org.metaroce.core.congestion;
