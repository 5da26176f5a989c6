/**
 * Spring Boot auto-configuration for fencing ({@link
 * dev.fencing.spring.boot.autoconfigure.FencingAutoConfiguration}) and its properties ({@link
 * dev.fencing.spring.boot.autoconfigure.FencingProperties}, prefix {@code fencing}).
 */
@NullMarked
package dev.fencing.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
