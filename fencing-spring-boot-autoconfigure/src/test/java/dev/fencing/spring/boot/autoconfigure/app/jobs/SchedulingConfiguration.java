package dev.fencing.spring.boot.autoconfigure.app.jobs;

import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.context.annotation.Configuration;

/** ShedLock in method-proxy mode (its default), configured apart from the application class. */
@Configuration(proxyBeanMethods = false)
@EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
public class SchedulingConfiguration {}
