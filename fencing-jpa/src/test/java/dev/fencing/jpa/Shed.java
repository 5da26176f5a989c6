package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Inheritance;
import jakarta.persistence.InheritanceType;
import jakarta.persistence.Table;

/** Fenced with one resource, {@code JOINED}: its bulk writes run as several statements (CTEs). */
@Entity
@Table(name = "shed")
@Inheritance(strategy = InheritanceType.JOINED)
@Fenced("sheds")
public class Shed {
  @Id long id;

  String name = "";

  long size;
}
