package dev.fencing.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.SecondaryTable;
import jakarta.persistence.Table;

/** A fixed resource, {@code profiles}, over a primary and a secondary table. */
@Entity
@Table(name = "profile")
@SecondaryTable(name = "profile_detail")
@Fenced("profiles")
public class Profile {
  @Id String id = "";

  long visits;

  @Column(table = "profile_detail")
  long score;

  protected Profile() {}

  Profile(String id, long score) {
    this.id = id;
    this.score = score;
  }
}
