package dev.fencing.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.SecondaryTable;
import jakarta.persistence.Table;

/** One resource per row ({@code badge:<id>}) over a primary and a secondary table. */
@Entity
@Table(name = "badge")
@SecondaryTable(name = "badge_detail")
@Fenced(prefix = "badge:", attribute = "id")
public class Badge {
  @Id String id = "";

  long level;

  @Column(table = "badge_detail")
  long points;

  protected Badge() {}

  Badge(String id, long points) {
    this.id = id;
    this.points = points;
  }
}
