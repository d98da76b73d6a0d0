// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * Loss recovery building blocks: the responder's receive window (selective-repeat bitmap), the
 * requester's round-trip-time estimator and retransmission timeout, all driven by caller time.
 */
package org.metaroce.core.reliability;
