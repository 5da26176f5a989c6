/**
 * Fencing in a Spring Boot application: {@link dev.fencing.spring.boot.WithLease} around service
 * methods, and the exceptions a Spring application sees ({@link
 * dev.fencing.spring.boot.FencingRefusedDataAccessException}, {@link
 * dev.fencing.spring.boot.LeaseNotAcquiredException}). The auto-configuration that wires them is in
 * {@link dev.fencing.spring.boot.autoconfigure}.
 */
@NullMarked
package dev.fencing.spring.boot;

import org.jspecify.annotations.NullMarked;
