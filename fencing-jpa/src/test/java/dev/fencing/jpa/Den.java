package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.SoftDelete;

/** One resource per row, deleted softly (a deleted row stays, hidden). */
@Entity
@Table(name = "den")
@SoftDelete
@Fenced(prefix = "den:", attribute = "owner")
public class Den {
  @Id String id = "";

  String owner = "";

  long size;

  protected Den() {}

  Den(String id, String owner) {
    this.id = id;
    this.owner = owner;
  }
}
