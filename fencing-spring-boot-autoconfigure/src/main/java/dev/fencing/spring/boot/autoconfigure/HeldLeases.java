package dev.fencing.spring.boot.autoconfigure;

import dev.fencing.jdbc.Lease;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The leases {@code @WithLease} methods of this application hold right now (for health). */
final class HeldLeases {
  private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

  void add(Lease lease) {
    leases.add(lease);
  }

  void remove(Lease lease) {
    leases.remove(lease);
  }

  List<Lease> snapshot() {
    return List.copyOf(leases);
  }
}
