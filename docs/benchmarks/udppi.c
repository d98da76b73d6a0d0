// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0
// Build: gcc -O2 -o udppi udppi.c -lpthread. Run: ./udppi (no arguments).
// UDP ping-pong flavours on loopback, interleaved: blocks of B round trips per flavour, in turn,
// one socket pair per flavour, the same two spinning threads, so that every flavour sees the same
// modes of the host (on the 2-vCPU development VM a run sits at one of two speeds about 1.4 us
// apart, for seconds at a time, which separate runs of udppp.c cannot tell from a flavour's cost).
// 128-byte messages (a 64-byte SEND with its headers and attached ACK), non-blocking reads, the
// first fifth of each block dropped. Prints p10/p50/p90 per flavour (docs/native-transport.md).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define MAXF 16
#define B 3000
#define BLOCKS 180
typedef struct { const char *name; int recvmsg, tos, ts, gro, mmsg, epoll, sendmsg, noname; int sa, sb; struct sockaddr_in aa, ab; } flav;
static flav F[MAXF]; static int NF;
static long now_ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static int mk(flav *f, struct sockaddr_in *a){int s=socket(AF_INET,SOCK_DGRAM|SOCK_NONBLOCK,0);a->sin_family=AF_INET;a->sin_addr.s_addr=htonl(0x7f000001);a->sin_port=0;bind(s,(void*)a,sizeof *a);socklen_t l=sizeof *a;getsockname(s,(void*)a,&l);
 int one=1; if(f->tos) setsockopt(s,IPPROTO_IP,IP_RECVTOS,&one,4); if(f->ts) setsockopt(s,SOL_SOCKET,SO_TIMESTAMPNS,&one,4); if(f->gro) setsockopt(s,IPPROTO_UDP,UDP_GRO,&one,4);
 if(f->epoll){int ep=epoll_create1(0);struct epoll_event e={.events=EPOLLIN};epoll_ctl(ep,EPOLL_CTL_ADD,s,&e);} return s;}
static int rcv(flav *f,int s,char *out){char ctl[128];struct sockaddr_in name;
 for(;;){ssize_t n;
  if(f->recvmsg){struct iovec iov={out,2048};struct msghdr h;memset(&h,0,sizeof h);h.msg_iov=&iov;h.msg_iovlen=1;if(!f->noname){h.msg_name=&name;h.msg_namelen=sizeof name;}h.msg_control=ctl;h.msg_controllen=128;n=recvmsg(s,&h,0);}
  else n=recv(s,out,2048,0);
  if(n>0) return n;}}
static void snd(flav *f,int s,char *buf,int len){struct iovec iov={buf,len};
 if(f->mmsg){struct mmsghdr m;memset(&m,0,sizeof m);m.msg_hdr.msg_iov=&iov;m.msg_hdr.msg_iovlen=1;sendmmsg(s,&m,1,0);}
 else if(f->sendmsg){struct msghdr h;memset(&h,0,sizeof h);h.msg_iov=&iov;h.msg_iovlen=1;sendmsg(s,&h,0);}
 else send(s,buf,len,0);}
static void *echo(void *x){char b[2048];for(int k=0;k<BLOCKS;k++){flav *f=&F[k%NF];for(int i=0;i<B;i++){int n=rcv(f,f->sb,b);snd(f,f->sb,b,n);}}return 0;}
static int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
static void add(const char *name,int recvmsg,int tos,int ts,int gro,int mmsg,int epoll,int sendmsg,int noname){flav *f=&F[NF++];memset(f,0,sizeof *f);f->name=name;f->recvmsg=recvmsg;f->tos=tos;f->ts=ts;f->gro=gro;f->mmsg=mmsg;f->epoll=epoll;f->sendmsg=sendmsg;f->noname=noname;}
static long rt[MAXF][BLOCKS*B];
int main(void){
 // All connected; the flavours add one difference at a time, from Aeron's calls to the native transport's.
 add("K  send/recv",0,0,0,0,0,0,0,0);
 add("M  recvmsg(name)",1,0,0,0,0,0,0,0);
 add("Mn recvmsg(noname)",1,0,0,0,0,0,0,1);
 add("ME +TOS",1,1,0,0,0,0,0,0);
 add("MET +TOS+TS",1,1,1,0,0,0,0,0);
 add("METG +TOS+TS+GRO",1,1,1,1,0,0,0,0);
 add("METGS +sendmmsg",1,1,1,1,1,0,0,0);
 add("METGs +sendmsg",1,1,1,1,0,0,1,0);
 add("METGW +epoll set",1,1,1,1,0,1,0,0);
 for(int i=0;i<NF;i++){flav *f=&F[i];f->sa=mk(f,&f->aa);f->sb=mk(f,&f->ab);connect(f->sa,(void*)&f->ab,sizeof f->ab);connect(f->sb,(void*)&f->aa,sizeof f->aa);}
 int cnt[MAXF]={0};
 pthread_t t;pthread_create(&t,0,echo,0);char b[2048];memset(b,7,2048);
 for(int k=0;k<BLOCKS;k++){int fi=k%NF;flav *f=&F[fi];for(int i=0;i<B;i++){long t0=now_ns();snd(f,f->sa,b,128);rcv(f,f->sa,b);long d=now_ns()-t0; if(i>=B/5) rt[fi][cnt[fi]++]=d;}}
 pthread_join(t,0);
 for(int i=0;i<NF;i++){qsort(rt[i],cnt[i],sizeof(long),cmp);printf("%-24s p50 %.2f p10 %.2f p90 %.2f us (n=%d)\n",F[i].name,rt[i][cnt[i]/2]/1000.0,rt[i][cnt[i]/10]/1000.0,rt[i][cnt[i]*9/10]/1000.0,cnt[i]);}
 return 0;}
