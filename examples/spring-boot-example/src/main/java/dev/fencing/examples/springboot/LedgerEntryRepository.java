package dev.fencing.examples.springboot;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

public interface LedgerEntryRepository extends JpaRepository<LedgerEntry, Long> {
  @Query("SELECT coalesce(sum(e.amount), 0) FROM LedgerEntry e")
  long total();

  List<LedgerEntry> findAllByOrderById();
}
